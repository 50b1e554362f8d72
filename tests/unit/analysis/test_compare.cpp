#include <gtest/gtest.h>

#include <random>

#include "analysis/compare.h"
#include "analysis_fixtures.h"

namespace gpuscale {
namespace {

using testing::loaded;
using testing::row_json;

const nlohmann::json kP = {{"dtype", "fp64"}, {"array_bytes", 1024}};

// One independent row at 2 ranks, each rank at v with repetitions +-spread.
nlohmann::json two(double v, double spread, const std::string& unit = "GB/s") {
  return row_json("stream.triad", "independent", kP, 2, {v, v}, unit, spread);
}

Verdict verdict_of(const nlohmann::json& a, const nlohmann::json& b, double threshold = 0.05,
                   const std::string& model_b = "Test GPU") {
  auto ra = loaded({a});
  auto rb = loaded({b}, model_b);
  auto c = compare_results(ra, rb, threshold);
  EXPECT_EQ(c.rows.size(), 1u);
  return c.rows.empty() ? Verdict::same : c.rows[0].verdict;
}

TEST(NoiseBand, LargestRelativeSpreadOverRanks) {
  auto r = testing::result_row("x", "independent", kP, 2, {100, 50}, "GB/s", 0.02);
  r.ranks[1].stats.min = r.ranks[1].stats.lo = 40;  // (50 - 40) / 50 = 20% down on rank 1
  auto run = loaded({r});
  const auto b = noise_band(run.rows[0]);
  EXPECT_NEAR(b.down, 0.20, 1e-12);
  EXPECT_NEAR(b.up, 0.02, 1e-12);
}

// A version-2 file written without --rank-stats keeps no per-rank statistics: the row's spread,
// written from them, gives the same band.
TEST(NoiseBand, FromTheRowSpreadWhenRanksCarryNoStatistics) {
  std::mt19937_64 gen(17);
  std::uniform_real_distribution<double> spread(0.0, 0.3), value(10, 1000);
  for (int i = 0; i < 20; ++i) {
    auto r = testing::result_row("x", "independent", kP, 3, {value(gen), value(gen), value(gen)}, "GB/s", spread(gen));
    auto& top = r.ranks[i % 3];
    top.stats.max = top.stats.hi = *top.value * (1 + spread(gen));
    auto row = loaded({r}).rows[0];
    const auto with_stats = noise_band(row);
    row.rank_stats = false;
    const nlohmann::json written = row;
    ASSERT_FALSE(written["ranks"].contains("stats"));
    ASSERT_TRUE(written.contains("spread"));
    const auto back = written.get<ResultRow>();
    EXPECT_EQ(back.ranks[0].stats.n, 0u);
    // The spread was written from the statistics, to 2 significant digits (docs/results.md).
    const auto from_spread = noise_band(back);
    EXPECT_NEAR(from_spread.down, with_stats.down, with_stats.down * 0.05);
    EXPECT_NEAR(from_spread.up, with_stats.up, with_stats.up * 0.05);
    EXPECT_GT(from_spread.up, 0);
  }
}

TEST(UnitDirection, IsAPropertyOfTheUnit) {
  EXPECT_EQ(unit_direction("GB/s"), Better::higher);
  EXPECT_EQ(unit_direction("TFLOP/s"), Better::higher);
  EXPECT_EQ(unit_direction("samples/s"), Better::higher);
  EXPECT_EQ(unit_direction("us"), Better::lower);
  EXPECT_EQ(unit_direction("furlongs"), Better::unknown);
}

TEST(Compare, SameFileIsSame) {
  EXPECT_EQ(verdict_of(two(100, 0.02), two(100, 0.02)), Verdict::same);
}

TEST(Compare, NeedsBothTheThresholdAndTheNoise) {
  // 8% lower, spreads 1%: beyond noise (1 - 0.99/1.01 = 2%) and beyond 5%, but not beyond 10%.
  EXPECT_EQ(verdict_of(two(100, 0.01), two(92, 0.01)), Verdict::regression);
  EXPECT_EQ(verdict_of(two(100, 0.01), two(92, 0.01), 0.10), Verdict::same);
  // 20% lower but the repetitions spread 15% each way: B/A may be as high as 0.8 x 1.15 / 0.85 = 1.08,
  // across the threshold: inconclusive, not same.
  EXPECT_EQ(verdict_of(two(100, 0.15), two(80, 0.15)), Verdict::inconclusive);
  // Without noise the threshold alone decides.
  EXPECT_EQ(verdict_of(two(100, 0.0), two(96, 0.0)), Verdict::same);  // no noise, but within the threshold
  EXPECT_EQ(verdict_of(two(100, 0.0), two(94.9, 0.0)), Verdict::regression);
  EXPECT_EQ(verdict_of(two(100, 0.01), two(120, 0.01)), Verdict::improvement);
}

TEST(Compare, LowerIsBetterUnitsRegressUpwards) {
  EXPECT_EQ(verdict_of(two(100, 0.01, "us"), two(120, 0.01, "us")), Verdict::regression);
  EXPECT_EQ(verdict_of(two(100, 0.01, "us"), two(80, 0.01, "us")), Verdict::improvement);
  EXPECT_EQ(verdict_of(two(100, 0.01, "furlongs"), two(10, 0.01, "furlongs")), Verdict::not_comparable);
}

TEST(Compare, InvalidOrFailedInEitherFileIsAProblem) {
  auto bad = testing::with_status(two(100, 0.01), "invalid");
  EXPECT_EQ(verdict_of(two(100, 0.01), bad), Verdict::problem);
  EXPECT_EQ(verdict_of(bad, two(100, 0.01)), Verdict::problem);
  auto skipped = testing::with_status(two(100, 0.01), "skipped");
  auto ra = loaded({two(100, 0.01)});
  auto rb = loaded({skipped});
  auto c = compare_results(ra, rb, 0.05);
  EXPECT_EQ(c.rows[0].verdict, Verdict::skipped);
  EXPECT_FALSE(c.failed());
  auto rbad = loaded({bad});
  EXPECT_TRUE(compare_results(ra, rbad, 0.05).failed());
}

TEST(Compare, DifferentDeviceModelsUseFractionOfPeak) {
  auto a = two(100, 0.01);
  auto b = two(50, 0.01);  // half the value on a device with half the peak: the same fraction
  a["expected_peak"] = 125.0, a["fraction_of_peak"] = 0.40;
  b["expected_peak"] = 62.5, b["fraction_of_peak"] = 0.40;
  EXPECT_EQ(verdict_of(a, b, 0.05, "Other GPU"), Verdict::same);
  EXPECT_EQ(verdict_of(a, b, 0.05, "Test GPU"), Verdict::regression);  // same model: absolute values
  b["fraction_of_peak"] = 0.30;
  EXPECT_EQ(verdict_of(a, b, 0.05, "Other GPU"), Verdict::regression);
}

TEST(Compare, RowsInOneFileOnlyAreListedNotFatal) {
  auto ra = loaded({two(100, 0.01), row_json("gemm", "independent", {{"m", 1}}, 1, {5}, "TFLOP/s")});
  auto rb = loaded({two(100, 0.01), row_json("stream.copy", "independent", kP, 1, {5})});
  auto c = compare_results(ra, rb, 0.05);
  EXPECT_EQ(c.rows.size(), 1u);
  ASSERT_EQ(c.only_a.size(), 1u);
  ASSERT_EQ(c.only_b.size(), 1u);
  EXPECT_EQ(c.only_a[0]->benchmark, "gemm");
  EXPECT_EQ(c.only_b[0]->benchmark, "stream.copy");
  EXPECT_FALSE(c.failed());
}

TEST(Compare, ValuesMovedWithinTheirSpreadNeverRegress) {
  // Every rank moved to the bottom of its own repetition range: the worst noise can do.
  for (double spread : {0.0, 0.01, 0.05, 0.3}) {
    auto a = testing::result_row("stream.triad", "independent", kP, 4, {100, 90, 110, 95}, "GB/s", spread);
    auto b = a;
    double sum = 0;
    for (auto& r : b.ranks) {
      r.value = r.stats.median = r.stats.lo;
      sum += r.stats.lo;
    }
    b.aggregate = sum;
    const auto v = verdict_of(a, b);
    EXPECT_TRUE(v == Verdict::same || v == Verdict::inconclusive) << "spread " << spread << ": " << verdict_name(v);
    if (spread <= 0.01) {
      EXPECT_EQ(v, Verdict::same) << "spread " << spread;
    }
  }
}

TEST(Compare, JUnitHasOneCasePerMatchedRow) {
  auto ra = loaded({two(100, 0.01), row_json("gemm", "independent", {{"m", 1}}, 1, {5}, "TFLOP/s")});
  auto rb = loaded({two(50, 0.01), row_json("gemm", "independent", {{"m", 1}}, 1, {5}, "TFLOP/s")});
  auto suite = comparison_suite(compare_results(ra, rb, 0.05));
  ASSERT_EQ(suite.cases.size(), 2u);
  EXPECT_TRUE(suite.cases[0].failed);
  EXPECT_FALSE(suite.cases[1].failed);
  const auto xml = junit_xml("gpuscale compare", {suite});
  EXPECT_NE(xml.find("tests=\"2\" failures=\"1\""), std::string::npos);
}

}  // namespace
}  // namespace gpuscale
