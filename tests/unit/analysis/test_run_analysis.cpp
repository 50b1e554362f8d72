// analysis/run_analysis: the result file's whole "analysis" object from one call. On random runs (a
// random mix of independent rows with slow ranks, tiled groups with a slow host, a node-pair matrix,
// a burn-in with a throttled GPU and a corrupting one), the object holds every part as its own
// function gives it, the burn-in's sustained outliers after the fleet's, and one sorted list of
// suspect hosts; and it is byte for byte the object `gpuscale run` wrote when it patched the parts in
// one after another.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "analysis/burn_capacity.h"
#include "analysis/burn_drift.h"
#include "analysis/fleet_outliers.h"
#include "analysis/run_analysis.h"
#include "analysis/stragglers.h"
#include "core/stats.h"

namespace gpuscale {
namespace {

using nlohmann::json;

struct RandomRun {
  json doc;  // the rank identities ("ranks")
  std::vector<ResultRow> rows;
  bool burn = false;  // the rows hold a burn-in
};

std::string host_of(int rank, int per_host) { return "n" + std::to_string(rank / per_host); }

RankValue rank_value(int rank, int per_host, double v, double spread) {
  RankValue r;
  r.rank = rank;
  r.host = host_of(rank, per_host);
  r.device_index = rank % per_host;
  std::vector<double> reps;
  for (int i = -2; i <= 2; ++i) reps.push_back(v * (1 + spread * i / 2));
  r.stats = compute_stats(reps);
  r.value = v;
  return r;
}

// Independent rows around a level, each rank of `slow` at `factor` of it.
ResultRow independent_row(std::mt19937_64& gen, int ranks, int per_host, const std::set<int>& slow, double factor) {
  std::uniform_real_distribution<double> noise(0.97, 1.03);
  const double level = std::uniform_real_distribution<double>(10, 1000)(gen);
  ResultRow row;
  row.benchmark = "stream.triad";
  row.scope = "independent";
  row.params = {{"dtype", "fp64"}, {"array_bytes", 1 << 20}};
  row.gpu_count = ranks;
  row.unit = "GB/s";
  for (int r = 0; r < ranks; ++r)
    row.ranks.push_back(rank_value(r, per_host, level * noise(gen) * (slow.count(r) ? factor : 1.0), 0.01));
  return row;
}

// One GPU count tiled into single-host groups, the groups of host `slow` (-1: none) at half.
ResultRow group_row(std::mt19937_64& gen, int ranks, int per_host, int slow) {
  std::uniform_real_distribution<double> noise(0.97, 1.03);
  ResultRow row;
  row.benchmark = "stream.copy";
  row.scope = "independent";
  row.params = {{"dtype", "fp64"}, {"array_bytes", 1 << 20}};
  row.gpu_count = per_host;
  row.unit = "GB/s";
  for (int first = 0; first + per_host <= ranks; first += per_host) {
    RowGroup g;
    g.hosts = {host_of(first, per_host)};
    for (int r = first; r < first + per_host; ++r) g.ranks.push_back(r);
    g.value = 100 * noise(gen) * (first / per_host == slow ? 0.5 : 1.0);
    g.spread_down = g.spread_up = 0.01;
    row.groups.push_back(g);
  }
  return row;
}

// A node-pair matrix of the hosts, every pair of host `slow` (-1: none) at half.
ResultRow pair_row(std::mt19937_64& gen, int ranks, int per_host, int slow) {
  std::uniform_real_distribution<double> noise(0.97, 1.03);
  const int nodes = ranks / per_host;
  ResultRow row;
  row.benchmark = "pairs";
  row.scope = "collective";
  row.params = {{"collective", "all_reduce"}};
  row.gpu_count = ranks;
  row.unit = "GB/s";
  json hosts = json::array(), members = json::array(), values = json::array();
  for (int i = 0; i < nodes; ++i) {
    hosts.push_back(host_of(i * per_host, per_host));
    json of = json::array();
    for (int r = i * per_host; r < (i + 1) * per_host; ++r) of.push_back(r);
    members.push_back(of);
    values.push_back(json(static_cast<std::size_t>(nodes), nullptr));
  }
  for (int i = 0; i < nodes; ++i)
    for (int j = i + 1; j < nodes; ++j)
      values[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] =
          values[static_cast<std::size_t>(j)][static_cast<std::size_t>(i)] = 20 * noise(gen) * (i == slow || j == slow ? 0.5 : 1.0);
  row.matrices = json::array({{{"kind", "node"}, {"hosts", hosts}, {"ranks", members}, {"values", values}}});
  return row;
}

// A burn-in's windows (burn.gemm), rank `throttled` (-1: none) at a third from the fourth window on,
// rank `corrupt` (-1: none) disagreeing with its peers in every odd window.
std::vector<ResultRow> burn_rows(std::mt19937_64& gen, int ranks, int per_host, int throttled, int corrupt) {
  std::uniform_real_distribution<double> noise(0.97, 1.03);
  std::vector<ResultRow> rows;
  for (int w = 0; w < 12; ++w) {
    ResultRow row;
    row.benchmark = "burn.gemm";
    row.scope = "collective";
    row.params = {{"kind", "gemm"}, {"window", w}, {"window_s", 10}};
    row.gpu_count = ranks;
    row.unit = "TFLOP/s";
    for (int r = 0; r < ranks; ++r) {
      auto v = rank_value(r, per_host, 50 * noise(gen) * (r == throttled && w >= 3 ? 1.0 / 3 : 1.0), 0.02);
      v.metrics["sdc"] = r == corrupt && w % 2 ? "disagrees" : "agrees";
      if (v.metrics["sdc"] == "disagrees") v.metrics["sdc_block"] = w;
      row.ranks.push_back(v);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

RandomRun random_run(std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  const int per_host = pick(1, 4), nodes = pick(3, 6), ranks = per_host * nodes;
  RandomRun run;
  run.doc = {{"ranks", json::array()}};
  for (int r = 0; r < ranks; ++r)
    run.doc["ranks"].push_back({{"rank", r}, {"host", host_of(r, per_host)},
                                {"device", {{"details", {{"uuid", "GPU-" + std::to_string(r)}, {"pci_bus_id", std::to_string(r)}}}}}});
  if (pick(0, 3) > 0) {
    std::set<int> slow;
    for (int n = pick(0, 2); n > 0; --n) slow.insert(pick(0, ranks - 1));
    run.rows.push_back(independent_row(gen, ranks, per_host, slow, std::uniform_real_distribution<double>(0.5, 0.95)(gen)));
  }
  if (pick(0, 2) > 0) run.rows.push_back(group_row(gen, ranks, per_host, pick(-1, nodes - 1)));
  if (pick(0, 2) > 0) run.rows.push_back(pair_row(gen, ranks, per_host, pick(-1, nodes - 1)));
  if (pick(0, 2) > 0) {
    run.burn = true;
    for (auto& row : burn_rows(gen, ranks, per_host, pick(-1, ranks - 1), pick(0, 1) ? pick(0, ranks - 1) : -1))
      run.rows.push_back(std::move(row));
  }
  std::shuffle(run.rows.begin(), run.rows.end(), gen);
  return run;
}

AnalysisRules random_rules(std::uint64_t seed) {
  std::mt19937_64 gen(seed ^ 0x5eed);
  AnalysisRules rules;
  rules.straggler_threshold = std::uniform_real_distribution<double>(0.05, 0.3)(gen);
  rules.outlier.fraction = std::uniform_real_distribution<double>(0.05, 0.3)(gen);
  return rules;
}

// What `gpuscale run` wrote before run_analysis owned the object: the stragglers' section, the fleet's
// outliers patched in, then the burn-in's parts, its sustained outliers appended and its hosts merged.
json patched_as_before(const RandomRun& run, const AnalysisRules& rules) {
  const json& ranks = run.doc["ranks"];
  json a = straggler_analysis(run.doc, run.rows, rules.straggler_threshold);
  a.update(fleet_outliers(run.rows, ranks, rules.outlier));
  auto drift = burn_drift(run.rows, ranks, rules.burn_fraction());
  if (drift["burn"].empty()) return a;
  a["burn"] = drift["burn"];
  a["sdc"] = burn_corruption(run.rows, ranks);
  a["capacity"] = burn_capacity(run.rows, ranks);
  std::set<std::string> suspects;
  for (const auto& h : a["outlier_hosts"]) suspects.insert(h.get<std::string>());
  for (const auto& e : a["sdc"]) suspects.insert(e["host"].get<std::string>());
  for (const auto& o : drift["sustained"]) {
    suspects.insert(o["hosts"][0].get<std::string>());
    a["outliers"].push_back(o);
  }
  a["outlier_hosts"] = std::vector<std::string>(suspects.begin(), suspects.end());
  return a;
}

constexpr int kRuns = 60;

TEST(RunAnalysis, ByteForByteTheObjectTheRunPatchedTogether) {
  for (int t = 0; t < kRuns; ++t) {
    const auto run = random_run(700 + t);
    const auto rules = random_rules(700 + t);
    EXPECT_EQ(run_analysis(run.doc, run.rows, rules).dump(), patched_as_before(run, rules).dump()) << "seed " << 700 + t;
  }
}

TEST(RunAnalysis, EachPartIsItsOwnFunctions) {
  int with_stragglers = 0, with_fleet = 0, with_sustained = 0, with_sdc = 0;
  for (int t = 0; t < kRuns; ++t) {
    const auto run = random_run(900 + t);
    const auto rules = random_rules(900 + t);
    const json a = run_analysis(run.doc, run.rows, rules);
    const json& ranks = run.doc["ranks"];
    SCOPED_TRACE("seed " + std::to_string(900 + t));

    // The stragglers, by their own rule and threshold.
    const auto stragglers = find_stragglers(run.doc, run.rows, rules.straggler_threshold);
    EXPECT_DOUBLE_EQ(a["straggler_threshold"].get<double>(), rules.straggler_threshold);
    ASSERT_EQ(a["stragglers"].size(), stragglers.size());
    for (std::size_t i = 0; i < stragglers.size(); ++i) EXPECT_EQ(a["stragglers"][i]["rank"], stragglers[i].rank);
    with_stragglers += !stragglers.empty();

    // The fleet's outliers first, in their order; then the burn-in's sustained ones, each of one rank.
    const auto fleet = fleet_outliers(run.rows, ranks, rules.outlier);
    const auto drift = burn_drift(run.rows, ranks, rules.burn_fraction());
    EXPECT_EQ(a["outlier_rule"], fleet["outlier_rule"]);
    ASSERT_EQ(a["outliers"].size(), fleet["outliers"].size() + drift["sustained"].size());
    for (std::size_t i = 0; i < fleet["outliers"].size(); ++i) EXPECT_EQ(a["outliers"][i], fleet["outliers"][i]);
    for (std::size_t i = 0; i < drift["sustained"].size(); ++i) {
      const auto& o = a["outliers"][fleet["outliers"].size() + i];
      EXPECT_EQ(o["kind"], "sustained");
      EXPECT_EQ(o, drift["sustained"][i]);
    }
    with_fleet += !fleet["outliers"].empty();
    with_sustained += !drift["sustained"].empty();

    // The burn-in's keys exactly when there is a burn-in.
    for (const char* key : {"burn", "sdc", "capacity"}) EXPECT_EQ(a.contains(key), run.burn) << key;
    if (run.burn) {
      EXPECT_EQ(a["burn"], drift["burn"]);
      EXPECT_EQ(a["sdc"], burn_corruption(run.rows, ranks));
      EXPECT_EQ(a["capacity"], burn_capacity(run.rows, ranks));
      with_sdc += !a["sdc"].empty();
    }

    // One sorted list of suspects: the fleet's, each corrupting GPU's host and each sustained outlier's.
    std::set<std::string> suspects;
    for (const auto& h : fleet["outlier_hosts"]) suspects.insert(h.get<std::string>());
    if (run.burn)
      for (const auto& e : a["sdc"]) suspects.insert(e["host"].get<std::string>());
    for (const auto& o : drift["sustained"]) suspects.insert(o["hosts"][0].get<std::string>());
    EXPECT_EQ(a["outlier_hosts"], json(std::vector<std::string>(suspects.begin(), suspects.end())));
  }
  // The random runs reach every part (otherwise the checks above prove little).
  EXPECT_GT(with_stragglers, 0);
  EXPECT_GT(with_fleet, 0);
  EXPECT_GT(with_sustained, 0);
  EXPECT_GT(with_sdc, 0);
}

TEST(RunAnalysis, NoRowsNoRanks) {
  const json a = run_analysis(json::object(), {}, AnalysisRules{});
  EXPECT_EQ(a["stragglers"], json::array());
  EXPECT_EQ(a["outliers"], json::array());
  EXPECT_EQ(a["outlier_hosts"], json::array());
  EXPECT_DOUBLE_EQ(a["straggler_threshold"].get<double>(), kDefaultStragglerThreshold);
  EXPECT_FALSE(a.contains("burn"));
}

}  // namespace
}  // namespace gpuscale
