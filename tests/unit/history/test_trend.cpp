// history/trend.h: series, baselines, regressions and change points over points in memory.
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "history/trend.h"

namespace gpuscale::history {
namespace {

std::mt19937& rng() {
  static std::mt19937 r(std::random_device{}());
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
