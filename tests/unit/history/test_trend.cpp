// history/trend.h: series, baselines, regressions and change points over points in memory.
#include <cmath>
#include <cstdio>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_seed.h"
#include "core/error.h"
#include "history/level_steps.h"
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

TEST(Trend, BaselineIsTheMedianOfTheLastKWithARobustBand) {
  std::vector<RowPoint> rows;
  const std::vector<double> values = {50, 100, 104, 96, 102, 98};
  for (std::size_t i = 0; i < values.size(); ++i) rows.push_back(row(static_cast<int>(i), values[i]));
  const auto series = row_series(rows);
  ASSERT_EQ(series.size(), 1u);
  const auto b = baseline_before(series[0], 6, 5);  // 100 104 96 102 98: the 50 is older than K
  ASSERT_TRUE(b);
  EXPECT_DOUBLE_EQ(b->median, 100);
  EXPECT_EQ(b->runs, 5u);
  // The band of one new point against them (reference_level): wider than the points' own 2%, and the
  // same both ways in ratio, never their min..max.
  std::vector<LevelPoint> pts;
  for (std::size_t i = 1; i < values.size(); ++i) pts.push_back({values[i], series[0].points[i].band});
  const auto ref = reference_level(pts, 0, pts.size());
  EXPECT_DOUBLE_EQ(b->band.down, ref.band.down);
  EXPECT_GT(b->band.down, 0.04);
  EXPECT_NEAR((1 - b->band.down) * (1 + b->band.up), 1, 1e-12);
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
  // Since a date after the step, and without --since: the regression still holds, named at its step.
  for (const std::string since : {"2026-01-09", ""}) {
    const auto later = find_regressions(series, {since, 3, 0.1});
    ASSERT_EQ(later.size(), 1u) << since;
    EXPECT_EQ(later[0].changed->run_id, "run05");
    EXPECT_EQ(later[0].latest->run_id, "run09");
    EXPECT_EQ(later[0].baseline.runs, 3u);  // --baseline-runs 3: the last 3 runs before the step
    EXPECT_EQ(later[0].runs, 5u);
    EXPECT_FALSE(later[0].recovered);
  }
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
  // The look-back N = 3. Since day 8: c1's window starts at its 8th run, 3 before it is day 5; c2 has
  // nothing since.
  EXPECT_EQ(regression_horizon(runs, {"2026-01-08", 5, 0.1, 3}), "2026-01-05T00:00:00Z");
  // The latest runs: c1's day 10 (3 before: day 7), c2's day 6 (3 before: day 3); the older wins.
  EXPECT_EQ(regression_horizon(runs, {"", 5, 0.1, 3}), "2026-01-03T00:00:00Z");
  EXPECT_EQ(regression_horizon(runs, {"", 5, 0.1, 4}), "");  // c2 has only 3 runs before its latest
  EXPECT_EQ(regression_horizon(runs, {"2026-02-01", 5, 0.1, 3}), "2026-02-01");  // nothing since anywhere
  EXPECT_EQ(regression_horizon({}, {"", 5, 0.1, 30}), "");
  EXPECT_EQ(regression_horizon(runs, {}), "");  // the default N = 30 reaches before every run here
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
  // (since, look-back N): the step at run 15 is found while 2 runs before it lie within the N runs before
  // the window; without --since and N = 5 (runs 14-18 before run 19) it is too old.
  const std::vector<std::pair<std::string, std::size_t>> cases = {
      {"", 6}, {"", 5}, {runs[15].created_utc, 5}, {runs[15].created_utc, 3}, {runs[12].created_utc, 5}, {"", 30}};
  for (const auto& [since, lookback] : cases) {
    const RegressionRules rules{since, 30, 0.1, lookback};
    const std::string horizon = regression_horizon(runs, rules);
    ASSERT_EQ(horizon.empty(), lookback == 30);  // 30 reaches before run 0: every run
    std::vector<RankPoint> recent;
    for (const auto& k : all)
      if (k.row.created_utc >= horizon) recent.push_back(k);
    if (!horizon.empty()) {
      EXPECT_LT(recent.size(), all.size());
    }
    const auto whole = rank_series(all, false), bounded = rank_series(recent, false);
    const auto a = find_regressions(whole, rules), b = find_regressions(bounded, rules);
    const bool too_old = since.empty() && lookback == 5;
    ASSERT_EQ(a.size(), too_old ? 0u : 1u) << "since " << since << ", N " << lookback;
    ASSERT_EQ(b.size(), a.size()) << "since " << since << ", N " << lookback;
    if (a.empty()) continue;
    EXPECT_EQ(b[0].series->key.host, "n1");
    EXPECT_EQ(b[0].changed->run_id, "run15");
    EXPECT_EQ(b[0].latest->run_id, "run19");
    EXPECT_EQ(b[0].changed->run_id, a[0].changed->run_id);
    EXPECT_DOUBLE_EQ(b[0].baseline.median, a[0].baseline.median);
    EXPECT_DOUBLE_EQ(b[0].change.ratio, a[0].change.ratio);
  }
}

// A series of one host's values: `values[i]` at run i with own band `noise` from 10 repetitions.
Series series_of(const std::vector<double>& values, double noise = 0.02, const std::string& unit = "GB/s") {
  std::vector<RowPoint> rows;
  for (std::size_t i = 0; i < values.size(); ++i) {
    rows.push_back(row(static_cast<int>(i), values[i], noise));
    rows.back().reps = 10;
    rows.back().unit = unit;
  }
  auto s = row_series(rows);
  return s.at(0);
}

std::string since_run(int run) { return row(run, 0).created_utc; }

TEST(Trend, AStepIsNamedOnEveryRunWhileItHolds) {
  // The user's case: 100x slower from run 4 (index 3) on, in 4, 5 and 6 runs; with and without --since.
  std::mt19937 r(static_cast<unsigned>(test_seed()));
  std::uniform_real_distribution<double> jitter(-0.05, 0.05);
  std::vector<double> values;
  for (int i = 0; i < 6; ++i) values.push_back(50 * (i >= 3 ? 0.01 : 1) * (1 + jitter(r)));
  for (std::size_t n = 4; n <= 6; ++n) {
    const std::vector<Series> s{series_of({values.begin(), values.begin() + static_cast<long>(n)})};
    std::vector<std::string> sinces{""};
    for (std::size_t w = 4; w < n; ++w) sinces.push_back(since_run(static_cast<int>(w)));  // runs 5 and 6
    for (const auto& since : sinces) {
      const auto regs = find_regressions(s, {since, 30, 0.1});
      ASSERT_EQ(regs.size(), 1u) << n << " runs, since '" << since << "'";
      EXPECT_EQ(regs[0].changed->run_id, "run03");
      EXPECT_EQ(regs[0].latest->run_id, fmt::format("run{:02}", n - 1));
      EXPECT_EQ(regs[0].baseline.runs, 3u);
      EXPECT_EQ(regs[0].runs, n - 3);
      EXPECT_NEAR(regs[0].change.ratio, 0.01, 0.002);
      EXPECT_LT(regs[0].change.hi, 0.9);
      EXPECT_FALSE(regs[0].recovered);
    }
  }
}

TEST(Trend, ARecoveredStepIsNamedOnlyWhereItHeld) {
  // 100 for runs 0-3, 30 for runs 4-9, 100 again for runs 10-12.
  std::vector<double> v;
  for (int i = 0; i < 13; ++i) v.push_back(i >= 4 && i < 10 ? 30 : 100);
  const std::vector<Series> s{series_of(v)};
  EXPECT_TRUE(find_regressions(s, {}).empty());                      // the latest run: recovered
  EXPECT_TRUE(find_regressions(s, {since_run(10), 30, 0.1}).empty());  // it recovered before the window
  const auto regs = find_regressions(s, {since_run(8), 30, 0.1});      // it held at runs 8 and 9
  ASSERT_EQ(regs.size(), 1u);
  EXPECT_EQ(regs[0].changed->run_id, "run04");
  EXPECT_EQ(regs[0].latest->run_id, "run09");
  EXPECT_EQ(regs[0].runs, 6u);
  ASSERT_TRUE(regs[0].recovered);
  EXPECT_EQ(regs[0].recovered->run_id, "run10");
  // The day it recovers: the newest point alone is better than the step's level, not worse.
  v.resize(11);
  EXPECT_TRUE(find_regressions({series_of(v)}, {}).empty());
}

TEST(Trend, AGradualDriftIsNamedOnceItAddsUpBeyondTheThreshold) {
  // 2% slower each run over 20 runs, 0.5% noise: no one step is 10%, but the level falls by a third.
  std::mt19937 r(static_cast<unsigned>(test_seed()));
  std::normal_distribution<double> noise(0, 0.005);
  std::vector<double> v;
  for (int i = 0; i < 20; ++i) v.push_back(100 * std::pow(0.98, i) * std::exp(noise(r)));
  const std::vector<Series> kept_1 = {series_of(v, 0.005)};  // the regressions point into it
  const auto regs = find_regressions(kept_1, {});
  ASSERT_EQ(regs.size(), 1u);
  const int at = std::stoi(regs[0].changed->run_id.substr(3));
  EXPECT_GE(at, 2);
  EXPECT_LE(at, 18);
  EXPECT_LT(regs[0].change.ratio, 0.9);
  // The first 5 runs of it (8% down) are not beyond the threshold yet.
  EXPECT_TRUE(find_regressions({series_of({v.begin(), v.begin() + 5}, 0.005)}, {}).empty());
}

TEST(Trend, AnImprovementIsNoRegression) {
  for (const double step : {3.0, 1.5}) {
    std::vector<double> v = {100, 101, 99, 100, 100 * step, 101 * step};
    EXPECT_TRUE(find_regressions({series_of(v)}, {}).empty()) << step;
    // The same numbers as times (lower is better) are a regression.
    EXPECT_EQ(find_regressions({series_of(v, 0.02, "ms")}, {}).size(), 1u) << step;
  }
}

TEST(Trend, ShortSeries) {
  EXPECT_TRUE(find_regressions({series_of({100})}, {}).empty());
  EXPECT_TRUE(find_regressions({series_of({100, 1})}, {}).empty());  // a step needs 2 runs before it
  const std::vector<Series> kept_2 = {series_of({100, 102, 1})};  // the regressions point into it
  const auto regs = find_regressions(kept_2, {});
  ASSERT_EQ(regs.size(), 1u);
  EXPECT_EQ(regs[0].changed->run_id, "run02");
  EXPECT_EQ(regs[0].baseline.runs, 2u);
  EXPECT_TRUE(find_regressions({series_of({100, 102, 60})}, {}).empty());  // two runs cannot rule out noise of 40%
  EXPECT_TRUE(find_regressions({series_of({100, 102, 101})}, {}).empty());
  EXPECT_TRUE(find_regressions({Series{}}, {}).empty());
}

// How often the rule names a step of a known size at its first run (or its fifth), and names it at
// the step: the measured rates are printed; the bounds sit well below them (docs/history.md).
TEST(Trend, PowerOnStepsOfKnownSize) {
  struct Case {
    int before;
    double step, sigma;
    int after;
    double bound;
  };
  std::mt19937 r(static_cast<unsigned>(test_seed()));
  for (const auto& c : {Case{3, 0.01, 0.05, 1, 0.98}, Case{30, 0.8, 0.01, 1, 0.98}, Case{10, 0.7, 0.05, 5, 0.85}}) {
    std::normal_distribution<double> noise(0, c.sigma);
    const int trials = 500;
    int named = 0;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> v;
      for (int i = 0; i < c.before + c.after; ++i) v.push_back(100 * (i >= c.before ? c.step : 1) * std::exp(noise(r)));
      const std::vector<Series> kept_3 = {series_of(v, 0.005)};  // the regressions point into it
      const auto regs = find_regressions(kept_3, {});
      named += regs.size() == 1 && regs[0].changed->run_id == fmt::format("run{:02}", c.before);
    }
    const double rate = static_cast<double>(named) / trials;
    std::printf("named: x%.2f after %d runs of noise %.0f%%, on run %d of it: %.1f%% (bound %.0f%%)\n", c.step, c.before,
                c.sigma * 100, c.after, rate * 100, c.bound * 100);
    EXPECT_GT(rate, c.bound);
  }
}

// The false-alarm rate: noise-only series of 3-30 runs (Gaussian run-to-run noise of sigma in log
// units; own bands of 0.5% from 10 repetitions, so the run-to-run band decides), judged as
// `history regressions` judges them. The bounds are 3-5x the rates measured over many seeds (printed),
// far beyond their sampling error at 2000 series.
struct FalseAlarms {
  double sigma, threshold, bound;
};

double false_alarm_rate(std::mt19937& r, double sigma, double threshold, int series) {
  std::uniform_int_distribution<int> length(3, 30);
  std::normal_distribution<double> noise(0, sigma);
  int named = 0;
  for (int i = 0; i < series; ++i) {
    std::vector<double> v(static_cast<std::size_t>(length(r)));
    for (auto& x : v) x = 100 * std::exp(noise(r));
    named += !find_regressions({series_of(v, 0.005)}, {"", 30, threshold}).empty();
  }
  return static_cast<double>(named) / series;
}

TEST(Trend, FalseAlarmRateOfNoiseOnlySeries) {
  std::mt19937 r(static_cast<unsigned>(test_seed()));
  const int series = 2000;
  // At threshold 0 the noise rule alone decides: about kStepAlpha of the series (0.5-1%) whatever the
  // noise; at the default threshold 0.1 none while the noise is well under the threshold.
  for (const auto& c : {FalseAlarms{0.02, 0, 0.025}, FalseAlarms{0.10, 0, 0.025}, FalseAlarms{0.02, 0.1, 0.0015},
                        FalseAlarms{0.05, 0.1, 0.0015}, FalseAlarms{0.10, 0.1, 0.003}, FalseAlarms{0.20, 0.1, 0.01}}) {
    const double rate = false_alarm_rate(r, c.sigma, c.threshold, series);
    std::printf("false alarms: noise %.0f%%, threshold %.2f: %.2f%% of %d series (bound %.2f%%)\n", c.sigma * 100,
                c.threshold, rate * 100, series, c.bound * 100);
    EXPECT_LT(rate, c.bound) << "noise " << c.sigma << ", threshold " << c.threshold;
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
