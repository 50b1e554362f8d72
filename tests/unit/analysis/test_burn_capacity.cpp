// analysis/burn_capacity: boost (first quarter) and sustained (last quarter) per GPU model, power per
// GPU and per node at sustained load from the windows' energy, work per joule; GPU models kept apart;
// node-scope (RAPL) power counted once per host and never split per GPU; a window without a power
// figure named, never read as zero. Figures are random; the expected ones are computed here again.
#include <gtest/gtest.h>

#include <random>

#include <fmt/format.h>

#include "analysis/burn_capacity.h"
#include "core/stats.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

using nlohmann::json;

// `figure[r][w]` and `power[r][w]` (< 0: no power figure) for ranks on hosts h0 (ranks 0, 1) and h1.
std::vector<ResultRow> windows(const std::vector<std::vector<double>>& figure, const std::vector<std::vector<double>>& power,
                               const char* scope) {
  std::vector<ResultRow> rows;
  for (std::size_t w = 0; w < figure[0].size(); ++w) {
    ResultRow row;
    row.benchmark = "burn.gemm";
    row.params = {{"window", static_cast<long long>(w)}};
    row.unit = "TFLOP/s";
    row.status = RowStatus::ok;
    for (std::size_t r = 0; r < figure.size(); ++r) {
      RankValue v;
      v.rank = static_cast<int>(r);
      v.host = r < 2 ? "h0" : "h1";
      v.value = figure[r][w];
      // As health/row_energy.h leaves a window: each rank's figures where known, the scope and the
      // reason for a missing one the row's.
      const double p = power[r][w];
      row.metrics["energy_scope"] = scope;
      if (p >= 0) {
        v.metrics["energy_j"] = p * 10;
        v.metrics["avg_power_w"] = p;
      } else {
        row.metrics["energy_invalid"] = fmt::format("rank {} ({}): NVML's energy counter went backwards", r, v.host);
      }
      row.ranks.push_back(v);
    }
    rows.push_back(row);
  }
  return rows;
}

json ranks_of(const std::vector<std::string>& models) {
  json out = json::array();
  for (const auto& m : models) out.push_back({{"device", {{"name", m}}}});
  return out;
}

TEST(BurnCapacity, BoostSustainedAndPowerPerGpuAndNode) {
  std::mt19937_64 rng(test_seed());
  std::uniform_real_distribution<double> u(0.5, 1.5);
  const std::size_t n = 8, q = 2, gpus = 4;
  std::vector<std::vector<double>> fig(gpus, std::vector<double>(n)), pw(gpus, std::vector<double>(n));
  for (auto& r : fig)
    for (auto& x : r) x = 100 * u(rng);
  for (auto& r : pw)
    for (auto& x : r) x = 400 * u(rng);
  const auto c = burn_capacity(windows(fig, pw, "gpu"), ranks_of(std::vector<std::string>(gpus, "H100")));
  ASSERT_EQ(c.size(), 1u);
  std::vector<double> boost, sustained, power;
  std::vector<double> node(2, 0);
  for (std::size_t r = 0; r < gpus; ++r) {
    boost.push_back(median_of(std::vector<double>(fig[r].begin(), fig[r].begin() + q)));
    sustained.push_back(median_of(std::vector<double>(fig[r].end() - q, fig[r].end())));
    const double p = (pw[r][n - 2] + pw[r][n - 1]) / 2;
    power.push_back(p);
    node[r < 2 ? 0 : 1] += p;
  }
  EXPECT_EQ(c[0]["model"], "H100");
  EXPECT_EQ(c[0]["gpus"], 4);
  EXPECT_EQ(c[0]["nodes"], 2);
  EXPECT_EQ(c[0]["per"], "gpu");
  EXPECT_NEAR(c[0]["boost"].get<double>(), median_of(boost), 1e-9);
  EXPECT_NEAR(c[0]["sustained"].get<double>(), median_of(sustained), 1e-9);
  EXPECT_NEAR(c[0]["sustained_ratio"].get<double>(), median_of(sustained) / median_of(boost), 1e-9);
  EXPECT_NEAR(c[0]["power_per_gpu_w"].get<double>(), median_of(power), 1e-9);
  EXPECT_NEAR(c[0]["power_per_node_w"]["max"].get<double>(), std::max(node[0], node[1]), 1e-9);
  EXPECT_NEAR(c[0]["work_per_j"].get<double>(), median_of(sustained) / median_of(power), 1e-12);
  EXPECT_EQ(c[0]["work_per_j_unit"], "TFLOP/J");
  EXPECT_FALSE(c[0].contains("power_invalid"));
  EXPECT_NE(format_burn_capacity(c).find("burn.gemm on 4 x H100 (2 node(s)), TFLOP/s per GPU"), std::string::npos)
      << format_burn_capacity(c);
}

TEST(BurnCapacity, ModelsApartNodePowerOnceAMissingPowerNamed) {
  const std::vector<std::vector<double>> fig = {{10, 10, 8, 8}, {10, 10, 9, 9}, {20, 20, 20, 20}, {20, 20, 18, 18}};
  std::vector<std::vector<double>> pw = {{300, 300, 300, 300}, {300, 300, 300, 300}, {500, 500, 500, 500}, {500, 500, 500, 500}};
  auto c = burn_capacity(windows(fig, pw, "gpu"), ranks_of({"A100", "A100", "H100", "H100"}));
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0]["model"], "A100");
  EXPECT_DOUBLE_EQ(c[0]["boost"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(c[0]["sustained"].get<double>(), 8.5);
  EXPECT_DOUBLE_EQ(c[1]["power_per_node_w"]["median"].get<double>(), 1000);

  // RAPL: the node's power, once per host, and no per-GPU power.
  c = burn_capacity(windows(fig, pw, "node"), ranks_of({"cpu", "cpu", "cpu", "cpu"}));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_TRUE(c[0]["power_per_gpu_w"].is_null());
  EXPECT_DOUBLE_EQ(c[0]["power_per_node_w"]["median"].get<double>(), 400);  // h0 300, h1 500
  EXPECT_EQ(c[0]["power_invalid"], "RAPL measures the node, not each GPU");
  EXPECT_FALSE(c[0].contains("work_per_j"));

  // A window of rank 3 without a power figure: its node has no total, the reason is given.
  pw[3][3] = -1;
  c = burn_capacity(windows(fig, pw, "gpu"), ranks_of({"H100", "H100", "H100", "H100"}));
  EXPECT_TRUE(c[0]["power_per_gpu_w"].is_null());
  EXPECT_DOUBLE_EQ(c[0]["power_per_node_w"]["max"].get<double>(), 600);  // h0 only
  EXPECT_NE(c[0]["power_invalid"].get<std::string>().find("rank 3 (h1): NVML's energy counter went backwards"),
            std::string::npos);
  EXPECT_TRUE(burn_capacity({}, json::array()).empty());
}

}  // namespace
}  // namespace gpuscale
