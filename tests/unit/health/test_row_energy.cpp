// health/row_energy and gpu_energy: a row's energy summed over its GPUs (or its nodes once each), its
// work per joule from its groups' figures, unknown with the reason when one rank's counter could not
// say; the run's energy per host; a GPU window's energy from NVML's counters at its two ends.
#include <gtest/gtest.h>

#include <random>

#include "health/observation.h"
#include "health/row_energy.h"
#include "core/units.h"
#include "results/result_file.h"
#include "test_seed.h"

namespace gpuscale::health {
namespace {

nlohmann::json energy(const char* scope, double j, double w) {
  return {{"scope", scope}, {"source", "x"}, {"seconds", j / w}, {"energy_j", j}, {"avg_power_w", w}};
}

ResultRow row_of(const std::vector<std::pair<std::string, nlohmann::json>>& ranks, std::vector<double> groups) {
  ResultRow row;
  row.unit = "TFLOP/s";
  row.status = RowStatus::ok;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    RankValue v;
    v.rank = static_cast<int>(i);
    v.host = ranks[i].first;
    v.metrics["energy"] = ranks[i].second;
    row.ranks.push_back(v);
  }
  for (double g : groups) {
    RowGroup grp;
    grp.value = g;
    row.groups.push_back(grp);
  }
  return row;
}

TEST(RowEnergy, UnitsPerJoule) {
  EXPECT_EQ(per_joule_unit("TFLOP/s"), "TFLOP/J");
  EXPECT_EQ(per_joule_unit("GB/s"), "GB/J");
  EXPECT_EQ(per_joule_unit("tokens/s"), "tokens/J");
  EXPECT_FALSE(per_joule_unit("us"));
  EXPECT_FALSE(per_joule_unit("/s"));
}

TEST(RowEnergy, GpusSummedNodesOnceWorkPerJouleFromTheGroups) {
  std::mt19937_64 rng(test_seed());
  std::uniform_real_distribution<double> u(50, 700);
  const double j0 = u(rng), j1 = u(rng), w0 = u(rng), w1 = u(rng), g0 = u(rng), g1 = u(rng);
  auto gpus = row_of({{"a", energy("gpu", j0, w0)}, {"a", energy("gpu", j1, w1)}}, {g0, g1});
  add_row_energy(gpus);
  EXPECT_EQ(gpus.metrics["energy_scope"], "gpu");
  EXPECT_DOUBLE_EQ(gpus.metrics["energy_j"].get<double>(), j0 + j1);
  EXPECT_DOUBLE_EQ(gpus.metrics["avg_power_w"].get<double>(), w0 + w1);
  EXPECT_DOUBLE_EQ(gpus.metrics["work_per_j"].get<double>(), (g0 + g1) / (w0 + w1));
  EXPECT_EQ(gpus.metrics["work_per_j_unit"], "TFLOP/J");
  EXPECT_FALSE(gpus.metrics.contains("energy_window")) << "no rank said which window";
  // Each rank keeps its two figures; the scope and the source are the row's.
  EXPECT_FALSE(gpus.ranks[0].metrics.contains("energy"));
  EXPECT_DOUBLE_EQ(gpus.ranks[1].metrics["energy_j"].get<double>(), j1);
  EXPECT_DOUBLE_EQ(gpus.ranks[1].metrics["avg_power_w"].get<double>(), w1);

  // Two ranks on host a read the same node counter: counted once; host b's added.
  auto nodes = row_of({{"a", energy("node", j0, w0)}, {"a", energy("node", j0, w0)}, {"b", energy("node", j1, w1)}}, {g0});
  add_row_energy(nodes);
  EXPECT_DOUBLE_EQ(nodes.metrics["energy_j"].get<double>(), j0 + j1);
  EXPECT_DOUBLE_EQ(nodes.metrics["work_per_j"].get<double>(), g0 / (w0 + w1));

  // A group without a figure, or a row that is not ok: energy, but no work per joule.
  auto wrong = row_of({{"a", energy("gpu", j0, w0)}}, {g0});
  wrong.status = RowStatus::invalid;
  add_row_energy(wrong);
  EXPECT_TRUE(wrong.metrics.contains("energy_j"));
  EXPECT_FALSE(wrong.metrics.contains("work_per_j"));

  // No energy on any rank (telemetry off): the row is left as it was.
  auto off = row_of({{"a", nlohmann::json()}}, {g0});
  off.ranks[0].metrics = nlohmann::json::object();
  add_row_energy(off);
  EXPECT_FALSE(off.metrics.contains("energy_j"));
}

TEST(RowEnergy, OneUnknownCounterMakesTheRowUnknownWithItsReason) {
  auto bad = energy("gpu", 1, 1);
  bad["energy_j"] = nullptr;
  bad["avg_power_w"] = nullptr;
  bad["invalid"] = "NVML's energy counter went backwards";
  auto row = row_of({{"a", energy("gpu", 100, 300)}, {"b", bad}}, {5});
  add_row_energy(row);
  EXPECT_TRUE(row.metrics["energy_j"].is_null());
  EXPECT_TRUE(row.metrics["avg_power_w"].is_null());
  EXPECT_EQ(row.metrics["energy_invalid"], "rank 1 (b): NVML's energy counter went backwards");
  EXPECT_TRUE(row.ranks[0].metrics.contains("energy_j"));   // known: kept
  EXPECT_FALSE(row.ranks[1].metrics.contains("energy_j"));  // unknown: the row says why
  EXPECT_FALSE(row.metrics.contains("work_per_j"));
}

TEST(RowEnergy, RunEnergyPerHost) {
  const auto out = run_energy_by_host({{0, "a", energy("gpu", 100, 300)}, {1, "a", energy("gpu", 50, 200)},
                                       {2, "b", energy("gpu", 10, 100)}});
  EXPECT_EQ(out["scope"], "gpu");
  EXPECT_DOUBLE_EQ(out["energy_j"].get<double>(), 160);
  EXPECT_DOUBLE_EQ(out["avg_power_w"].get<double>(), 600);
  ASSERT_EQ(out["hosts"].size(), 2u);
  EXPECT_EQ(out["hosts"][0]["units"], 2);
  EXPECT_DOUBLE_EQ(out["hosts"][0]["energy_j"].get<double>(), 150);
  const auto nodes = run_energy_by_host({{0, "a", energy("node", 100, 300)}, {1, "a", energy("node", 100, 300)}});
  EXPECT_DOUBLE_EQ(nodes["energy_j"].get<double>(), 100);
  const auto none = run_energy_by_host({{0, "a", nullptr}});
  EXPECT_TRUE(none["energy_j"].is_null());
  EXPECT_NE(none["invalid"].get<std::string>().find("no rank read an energy counter"), std::string::npos);
}

// MIG: the ranks on one GPU's slices each read the whole GPU's counter (NVML's total energy is the
// parent GPU's). Each GPU counts once per host, known by the counter's UUID, and the row says so.
TEST(RowEnergy, MigSlicesOfOneGpuCountItsCounterOnce) {
  std::mt19937_64 rng(test_seed());
  std::uniform_real_distribution<double> u(50, 700);
  const double j = u(rng), w = u(rng), k = u(rng), v = u(rng), g = u(rng);
  auto slice = [](double jj, double ww, const char* uuid) {
    auto e = energy("gpu", jj, ww);
    e["counter"] = uuid;
    return e;
  };
  std::vector<std::pair<std::string, nlohmann::json>> ranks;
  for (int s = 0; s < 7; ++s) ranks.push_back({"a", slice(j, w, "GPU-parent-0")});
  ranks.push_back({"b", slice(k, v, "GPU-parent-0")});  // another host's GPU, whatever its id
  auto row = row_of(ranks, {g});
  add_row_energy(row);
  EXPECT_DOUBLE_EQ(row.metrics["energy_j"].get<double>(), j + k);
  EXPECT_DOUBLE_EQ(row.metrics["avg_power_w"].get<double>(), w + v);
  EXPECT_DOUBLE_EQ(row.metrics["work_per_j"].get<double>(), g / (w + v));
  ASSERT_TRUE(row.metrics.contains("energy_shared")) << row.metrics.dump();
  EXPECT_NE(row.metrics["energy_shared"].get<std::string>().find("7 ranks share GPU-parent-0 on a"), std::string::npos)
      << row.metrics["energy_shared"];

  const auto run = run_energy_by_host({{0, "a", slice(j, w, "GPU-p")}, {1, "a", slice(j, w, "GPU-p")}, {2, "a", slice(k, v, "GPU-q")}});
  EXPECT_DOUBLE_EQ(run["energy_j"].get<double>(), j + k);
  EXPECT_EQ(run["hosts"][0]["units"], 2) << "two GPUs, not three ranks";
}

TEST(GpuEnergy, FromTheCountersAtTheWindowsEnds) {
  Observation o;
  GpuCounters a, b;
  a.energy_mj = 5'000'000;
  a.t = 1.0;
  b.energy_mj = 5'700'000;
  b.t = 3.0;
  o.add(a);
  o.add(b);
  GpuSample s;
  s.power_w = 340;
  o.add(s);
  s.power_w = 360;
  o.add(s);
  auto w = gpu_energy(o);
  ASSERT_TRUE(w.energy.joules) << w.energy.invalid;
  EXPECT_DOUBLE_EQ(*w.energy.joules, 700);
  EXPECT_DOUBLE_EQ(w.seconds, 2);
  EXPECT_DOUBLE_EQ(*average_power_w(w.energy, w.seconds), 350);
  EXPECT_EQ(o.power_samples(), 2u);
  EXPECT_DOUBLE_EQ(*o.power_mean(), 350);

  Observation unsupported;
  GpuCounters c;
  c.unsupported["energy_mj"] = "not supported (NVML_ERROR_NOT_SUPPORTED)";
  unsupported.add(c);
  unsupported.add(c);
  w = gpu_energy(unsupported);
  EXPECT_FALSE(w.energy.joules);
  EXPECT_EQ(w.energy.invalid, "NVML's energy counter: not supported (NVML_ERROR_NOT_SUPPORTED)");
  EXPECT_FALSE(gpu_energy(Observation()).energy.joules);
}

}  // namespace
}  // namespace gpuscale::health
