// The noise rule of compare (analysis/compare.h, docs/analysis.md) on seeded random repetitions: each
// rank's statistics come from draws of a known distribution, as a run computes them.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "test_seed.h"
#include "analysis/compare.h"
#include "analysis_fixtures.h"
#include "core/stats.h"

namespace gpuscale {
namespace {

using testing::loaded;
using testing::row_json;

const nlohmann::json kP = {{"dtype", "fp64"}, {"array_bytes", 1024}};

// An independent row of `ranks` ranks, each with `reps` repetitions drawn from draw(gen) x scale.
template <class Draw>
nlohmann::json drawn_row(std::mt19937_64& gen, Draw& draw, double scale, int ranks = 2, std::size_t reps = 10,
                         const std::string& unit = "GB/s") {
  auto row = testing::result_row("stream.triad", "independent", kP, ranks, std::vector<double>(static_cast<std::size_t>(ranks), 1.0), unit);
  double sum = 0;
  for (auto& r : row.ranks) {
    std::vector<double> v;
    for (std::size_t i = 0; i < reps; ++i) v.push_back(draw(gen) * scale);
    r.stats = compute_stats(v);
    r.value = r.stats.median;
    sum += r.stats.median;
  }
  row.aggregate = sum;
  return row;
}

Verdict verdict_of(const nlohmann::json& a, const nlohmann::json& b, double threshold = 0.05) {
  const auto ra = loaded({a}), rb = loaded({b});
  const auto c = compare_results(ra, rb, threshold);
  EXPECT_EQ(c.rows.size(), 1u);
  return c.rows.empty() ? Verdict::same : c.rows[0].verdict;
}

TEST(NoiseRule, SameDistributionNeverRegresses) {
  std::mt19937_64 gen(20261201);
  std::uniform_real_distribution<double> cv(0.001, 0.3), level(1, 1000);
  int tight = 0, same = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const double mean = level(gen), c = trial % 3 ? cv(gen) : 0.004;
    std::normal_distribution<double> draw(mean, mean * c);
    auto positive = [&](std::mt19937_64& g) { return std::max(draw(g), draw.mean() * 0.01); };
    const auto a = drawn_row(gen, positive, 1.0), b = drawn_row(gen, positive, 1.0);
    const auto v = verdict_of(a, b);
    ASSERT_NE(v, Verdict::regression) << "trial " << trial;
    ASSERT_NE(v, Verdict::improvement) << "trial " << trial;
    tight += c < 0.005;
    same += c < 0.005 && v == Verdict::same;
  }
  EXPECT_GT(same, tight * 9 / 10);  // tight rows are called the same, not inconclusive
}

TEST(NoiseRule, TwentyPercentWorseWithTheSameSpreadRegresses) {
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> cv(0.001, 0.015), level(1, 1000);
  for (const std::string unit : {"GB/s", "us"}) {
    for (int trial = 0; trial < 300; ++trial) {
      const double mean = level(gen);
      std::normal_distribution<double> draw(mean, mean * cv(gen));
      const double worse = unit == "us" ? 1.25 : 0.8;  // a time 25% longer is a rate 20% lower
      const auto a = drawn_row(gen, draw, 1.0, 2, 10, unit), b = drawn_row(gen, draw, worse, 2, 10, unit);
      ASSERT_EQ(verdict_of(a, b), Verdict::regression) << unit << " trial " << trial;
      ASSERT_EQ(verdict_of(b, a), Verdict::improvement) << unit << " trial " << trial;
    }
  }
}

TEST(NoiseRule, HugeSpreadIsInconclusive) {
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> sigma(0.3, 1.0), level(1, 1000);
  for (int trial = 0; trial < 300; ++trial) {
    std::lognormal_distribution<double> draw(std::log(level(gen)), sigma(gen));
    const auto a = drawn_row(gen, draw, 1.0), b = drawn_row(gen, draw, 0.8);
    ASSERT_EQ(verdict_of(a, b), Verdict::inconclusive) << "trial " << trial;
    ASSERT_EQ(verdict_of(a, drawn_row(gen, draw, 1.0)), Verdict::inconclusive) << "trial " << trial;
  }
}

TEST(NoiseRule, TheIntervalAgainstTheThreshold) {
  const auto change = [](double lo, double hi) { return Change{(lo + hi) / 2, lo, hi, true}; };
  EXPECT_EQ(verdict_of_change(change(0.80, 0.94), 0.05), Verdict::regression);
  EXPECT_EQ(verdict_of_change(change(0.80, 0.96), 0.05), Verdict::inconclusive);  // spans regression and same
  EXPECT_EQ(verdict_of_change(change(0.96, 1.04), 0.05), Verdict::same);
  EXPECT_EQ(verdict_of_change(change(1.01, 1.30), 0.05), Verdict::inconclusive);  // spans same and improvement
  EXPECT_EQ(verdict_of_change(change(1.06, 1.30), 0.05), Verdict::improvement);
  EXPECT_EQ(verdict_of_change(change(0.05, INFINITY), 0.05), Verdict::inconclusive);
  EXPECT_EQ(verdict_of_change(Change{0.5, 0.5, 0.5, false}, 0.05), Verdict::inconclusive);  // no noise estimate
  EXPECT_EQ(verdict_of_change(Change{1.0, 1.0, 1.0, true}, 0.0), Verdict::same);
}

TEST(NoiseRule, ConfidenceOfTheMedianBounds) {
  EXPECT_EQ(median_interval_confidence(1), 0);
  EXPECT_DOUBLE_EQ(median_interval_confidence(2), 0.5);             // min and max of 2
  EXPECT_DOUBLE_EQ(median_interval_confidence(5), 1 - 2.0 / 32);    // min and max of 5
  EXPECT_DOUBLE_EQ(median_interval_confidence(10), 1 - 22.0 / 1024);  // 2nd and 9th of 10
  // The claim checked by drawing: the median of the distribution lies in [lo, hi] of n draws as often
  // as the confidence says.
  std::mt19937_64 gen(test_seed());
  std::exponential_distribution<double> draw(1.0);  // skewed on purpose: the interval is distribution-free
  const double true_median = std::log(2.0);
  for (std::size_t n : {3u, 5u, 10u, 20u}) {
    int inside = 0, trials = 20000;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> v(n);
      for (auto& x : v) x = draw(gen);
      const auto s = compute_stats(v);
      inside += s.lo <= true_median && true_median <= s.hi;
    }
    EXPECT_NEAR(static_cast<double>(inside) / trials, median_interval_confidence(n), 0.01) << n;
  }
}

TEST(NoiseRule, OneRepetitionGivesNoNoiseEstimate) {
  auto a = testing::result_row("stream.triad", "independent", kP, 2, {100, 100});
  auto b = testing::result_row("stream.triad", "independent", kP, 2, {50, 50});
  for (auto* r : {&a, &b})
    for (auto& rank : r->ranks) {
      rank.stats.n = 1;
      rank.stats.min = rank.stats.max = rank.stats.lo = rank.stats.hi = *rank.value;
    }
  const auto c = compare_results(loaded({a}), loaded({b}), 0.05);
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].verdict, Verdict::inconclusive);
  EXPECT_NE(c.rows[0].note.find("no noise estimate"), std::string::npos);
  EXPECT_FALSE(c.failed());
}

TEST(NoiseRule, ARowWithoutAValueIsNotComparedAndNeverFails) {
  // A collective at 1 GPU: its time is recorded, its bandwidth is null.
  auto a = row_json("all_reduce", "collective", {{"size_bytes", 1024}}, 1, {1.0});
  a["aggregate"] = nullptr;
  a["metrics"] = {{"time_us", 12.5}};
  auto b = a;
  b["metrics"]["time_us"] = 99.0;
  for (const auto& [x, y] : {std::pair{a, b}, std::pair{a, row_json("all_reduce", "collective", {{"size_bytes", 1024}}, 1, {5.0})}}) {
    const auto c = compare_results(loaded({x}), loaded({y}), 0.05);
    ASSERT_EQ(c.rows.size(), 1u);
    EXPECT_EQ(c.rows[0].verdict, Verdict::not_comparable);
    EXPECT_FALSE(c.failed());
  }
}

}  // namespace
}  // namespace gpuscale
