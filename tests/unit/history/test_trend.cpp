// history/trend.h: series, baselines, regressions and change points over points in memory.
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_seed.h"
#include "core/error.h"
#include "history/trend.h"

namespace gpuscale::history {
namespace {

std::mt19937& rng() {
  static std::mt19937 r(test_seed());
  return r;
}

// A run's row: noise band `noise` both ways from 5 repetitions; `driver` its driver version.
RowPoint row(int run, double value, double noise = 0.02, const std::string& driver = "550.54", int gpus = 1) {
  RowPoint p;
  p.run_id = fmt::format("run{:02}", run);
  p.created_utc = fmt::format("2026-01-{:02}T00:00:00Z", run + 1);
  p.cluster = "c1";
  p.software = nlohmann::json{{"driver", driver}, {"nccl", "2.21"}}.dump();
  p.benchmark = "stream.triad";
  p.scope = "independent";
  p.params = R"({"dtype":"fp64","elements":1024})";
  p.unit = "GB/s";
  p.status = "ok";
  p.gpu_count = gpus;
  p.value = value;
  p.noise_down = p.noise_up = noise;
  p.reps = 5;
  return p;
}

TEST(Trend, BaselineIsTheMedianOfTheLastKWithTheirSpread) {
  std::vector<RowPoint> rows;
  const std::vector<double> values = {50, 100, 104, 96, 102, 98};
  for (std::size_t i = 0; i < values.size(); ++i) rows.push_back(row(static_cast<int>(i), values[i]));
  const auto series = row_series(rows);
  ASSERT_EQ(series.size(), 1u);
  const auto b = baseline_before(series[0], 6, 5);  // 100 104 96 102 98: the 50 is older than K
  ASSERT_TRUE(b);
  EXPECT_DOUBLE_EQ(b->median, 100);
  EXPECT_EQ(b->runs, 5u);
  EXPECT_NEAR(b->band.down, 0.04, 1e-12);  // (100 - 96) / 100, wider than the points' 2%
  EXPECT_NEAR(b->band.up, 0.04, 1e-12);
  EXPECT_FALSE(baseline_before(series[0], 0, 5));
}

TEST(Trend, StepNamedAtTheRunWhereItChangedWithTheDriver) {
  // Ten runs of random values around a random level; from run 6 on a third of it, with a new driver.
  std::uniform_real_distribution<double> level(10, 1000), jitter(-0.03, 0.03);
  const double base = level(rng());
  std::vector<RowPoint> rows;
  for (int run = 0; run < 10; ++run) {
    const bool slow = run >= 5;
    rows.push_back(row(run, base * (slow ? 0.33 : 1.0) * (1 + jitter(rng())), 0.02, slow ? "555.42" : "550.54"));
  }
  const auto series = row_series(rows);
  const auto regs = find_regressions(series, {"2026-01-06", 5, 0.1});
  ASSERT_EQ(regs.size(), 1u);
  EXPECT_EQ(regs[0].changed->run_id, "run05");
  EXPECT_EQ(regs[0].latest->run_id, "run09");
  EXPECT_EQ(regs[0].change_points, std::vector<std::string>{"driver 550.54 -> 555.42"});
  EXPECT_LT(regs[0].change.hi, 0.9);
  // The trend marks the driver change at run 5 and nowhere else.
  for (const auto& p : series[0].points) EXPECT_EQ(p.changes.empty(), p.run_id != "run05") << p.run_id;
  // Since a date after the step, the baseline is already slow: nothing is worse than it.
  EXPECT_TRUE(find_regressions(series, {"2026-01-09", 3, 0.1}).empty());
}

TEST(Trend, NoiseWithinItsBandIsNeverARegression) {
  // Runs whose values scatter by up to 20% with bands of 25%: the rule must not name one.
  std::uniform_real_distribution<double> scatter(0.8, 1.2);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<RowPoint> rows;
    for (int run = 0; run < 10; ++run) rows.push_back(row(run, 100 * scatter(rng()), 0.25));
    EXPECT_TRUE(find_regressions(row_series(rows), {"2026-01-06", 5, 0.1}).empty()) << trial;
  }
}

TEST(Trend, LowerIsBetterUnitsAndImprovements) {
  std::vector<RowPoint> rows;
  for (int run = 0; run < 6; ++run) {
    rows.push_back(row(run, run < 5 ? 10 : 30));
    rows.back().unit = "us";
  }
  EXPECT_EQ(find_regressions(row_series(rows), {}).size(), 1u);  // latest time tripled: worse
  for (auto& r : rows) r.unit = "GB/s";                           // the same numbers as bandwidth: better
  EXPECT_TRUE(find_regressions(row_series(rows), {}).empty());
}

TEST(Trend, WithoutRepetitionsNothingIsJudged) {
  std::vector<RowPoint> rows;
  for (int run = 0; run < 6; ++run) {
    rows.push_back(row(run, run < 5 ? 100 : 10));
    rows.back().reps = 1;
  }
  EXPECT_TRUE(find_regressions(row_series(rows), {}).empty());
}

TEST(Trend, HostSeriesAreTheMedianOfTheHostsRanksInIndependentRowsOnly) {
  std::vector<RankPoint> ranks;
  for (int run = 0; run < 2; ++run)
    for (int rank = 0; rank < 4; ++rank) {
      RankPoint k{row(run, 0), rank < 2 ? "n0" : "n1", "-", rank, 10.0 * (rank + 1) * (run + 1), true};
      ranks.push_back(k);
      k.row.benchmark = "all_reduce";
      k.row.scope = "collective";
      ranks.push_back(k);
    }
  const auto series = rank_series(ranks, false);
  ASSERT_EQ(series.size(), 2u);  // n0 and n1 of stream.triad; the collective's ranks measure their group
  EXPECT_EQ(series[0].key.host, "n0");
  ASSERT_EQ(series[0].points.size(), 2u);
  EXPECT_DOUBLE_EQ(series[0].points[0].value, 15);  // median of 10 and 20
  EXPECT_DOUBLE_EQ(series[1].points[1].value, 70);  // run 1: median of 60 and 80
}

RunSummary run_on(const std::string& cluster, int day) {
  RunSummary r;
  r.id = fmt::format("{}-{:02}", cluster, day);
  r.created_utc = fmt::format("2026-01-{:02}T00:00:00Z", day);
  r.cluster = cluster;
  return r;
}

TEST(Trend, RegressionHorizonIsTheKthRunBeforeEachClustersWindow) {
  std::vector<RunSummary> runs;  // c1 every day 1-10, c2 on days 3-6: in time order
  for (int day = 1; day <= 10; ++day) {
    runs.push_back(run_on("c1", day));
    if (day >= 3 && day <= 6) runs.push_back(run_on("c2", day));
  }
  // Since day 8: c1's window starts at its 8th run, 3 before it is day 5; c2 has nothing since.
  EXPECT_EQ(regression_horizon(runs, {"2026-01-08", 3, 0.1}), "2026-01-05T00:00:00Z");
  // The latest runs: c1's day 10 (3 before: day 7), c2's day 6 (3 before: day 3); the older wins.
  EXPECT_EQ(regression_horizon(runs, {"", 3, 0.1}), "2026-01-03T00:00:00Z");
  EXPECT_EQ(regression_horizon(runs, {"", 4, 0.1}), "");  // c2 has only 3 runs before its latest
  EXPECT_EQ(regression_horizon(runs, {"2026-02-01", 3, 0.1}), "2026-02-01");  // nothing since anywhere
  EXPECT_EQ(regression_horizon({}, {"", 5, 0.1}), "");
}

TEST(Trend, HostSeriesFromTheHorizonOnAreJudgedAsFromTheWholeStore) {
  // Twenty runs of 4 ranks on 2 hosts, random values; n1 slowed from run 15 on. The rule over the
  // rank values from the horizon on names exactly what it names over all of them.
  std::uniform_real_distribution<double> level(10, 1000), jitter(-0.03, 0.03);
  const double base = level(rng());
  std::vector<RankPoint> all;
  std::vector<RunSummary> runs;
  for (int run = 0; run < 20; ++run) {
    RunSummary r;
    r.id = fmt::format("run{:02}", run);
    r.created_utc = row(run, 0).created_utc;
    r.cluster = "c1";
    runs.push_back(r);
    for (int rank = 0; rank < 4; ++rank) {
      const bool slow = rank >= 2 && run >= 15;
      all.push_back({row(run, 0), rank < 2 ? "n0" : "n1", "-", rank, base * (slow ? 0.4 : 1) * (1 + jitter(rng())), true,
                     0.02, 0.02, 5});
    }
  }
  const std::vector<std::pair<std::string, std::size_t>> cases = {
      {"", 5}, {runs[15].created_utc, 5}, {runs[15].created_utc, 3}, {runs[12].created_utc, 5}};
  for (const auto& [since, runs_k] : cases) {
    const RegressionRules rules{since, runs_k, 0.1};
    const std::string horizon = regression_horizon(runs, rules);
    ASSERT_FALSE(horizon.empty());
    std::vector<RankPoint> recent;
    for (const auto& k : all)
      if (k.row.created_utc >= horizon) recent.push_back(k);
    EXPECT_LT(recent.size(), all.size());
    const auto whole = rank_series(all, false), bounded = rank_series(recent, false);
    const auto a = find_regressions(whole, rules), b = find_regressions(bounded, rules);
    // Without --since the latest run is judged against runs 14-18, mostly slow already: nothing.
    ASSERT_EQ(a.size(), since.empty() ? 0u : 1u) << "since " << since;
    ASSERT_EQ(b.size(), a.size()) << "since " << since;
    if (a.empty()) continue;
    EXPECT_EQ(b[0].series->key.host, "n1");
    EXPECT_EQ(b[0].changed->run_id, "run15");
    EXPECT_EQ(b[0].changed->run_id, a[0].changed->run_id);
    EXPECT_DOUBLE_EQ(b[0].baseline.median, a[0].baseline.median);
    EXPECT_DOUBLE_EQ(b[0].change.ratio, a[0].change.ratio);
  }
}

TEST(Trend, SoftwareChangesNameEachVersion) {
  EXPECT_EQ(software_changes({{"driver", "1"}, {"nccl", "2"}}, {{"driver", "1"}, {"nccl", "3"}, {"cuda_runtime", "13.0"}}),
            (std::vector<std::string>{"cuda_runtime - -> 13.0", "nccl 2 -> 3"}));
  EXPECT_TRUE(software_changes({{"driver", ""}}, {}).empty());
}

TEST(Trend, ParamsMatchKeyValuePairs) {
  const std::string p = R"({"dtype":"fp64","elements":1024})";
  EXPECT_TRUE(params_match(p, ""));
  EXPECT_TRUE(params_match(p, "dtype=fp64"));
  EXPECT_TRUE(params_match(p, "dtype=fp64,elements=1024"));
  EXPECT_FALSE(params_match(p, "dtype=fp32"));
  EXPECT_FALSE(params_match(p, "size=8"));
  EXPECT_THROW(params_match(p, "dtype"), Error);
  EXPECT_EQ(series_label({"c", "stream.triad", p, 2, "n3", ""}), "stream.triad dtype=fp64 elements=1024 @ 2 GPUs host n3");
}

}  // namespace
}  // namespace gpuscale::history
