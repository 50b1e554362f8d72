// core/stats: median, min, max, mean and sample standard deviation of repetitions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "test_seed.h"
#include "core/stats.h"

namespace gpuscale {
namespace {

TEST(Stats, OddCountHandComputed) {
  const auto s = compute_stats({5.0, 1.0, 3.0});
  EXPECT_EQ(s.n, 3u);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 5.0);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_DOUBLE_EQ(s.stddev, 2.0);  // sqrt((4 + 0 + 4) / (3 - 1))
}

TEST(Stats, EvenCountMedianIsTheMeanOfTheMiddleTwo) {
  const auto s = compute_stats({4.0, 1.0, 3.0, 2.0});
  EXPECT_EQ(s.n, 4u);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 4.0);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(5.0 / 3.0));  // (2.25 + 0.25 + 0.25 + 2.25) / 3

  const auto t = compute_stats({10.0, 200.0, 30.0, 1.0, 7.0, 9.0});  // sorted: 1 7 9 10 30 200
  EXPECT_DOUBLE_EQ(t.median, 9.5);
  EXPECT_DOUBLE_EQ(t.mean, 257.0 / 6.0);
}

TEST(Stats, SingleAndEmptyInputs) {
  const auto one = compute_stats({7.25});
  EXPECT_EQ(one.n, 1u);
  EXPECT_DOUBLE_EQ(one.median, 7.25);
  EXPECT_DOUBLE_EQ(one.min, 7.25);
  EXPECT_DOUBLE_EQ(one.max, 7.25);
  EXPECT_DOUBLE_EQ(one.mean, 7.25);
  EXPECT_EQ(one.stddev, 0.0);  // no sample deviation from one value (not NaN)

  const auto none = compute_stats({});
  EXPECT_EQ(none.n, 0u);
  EXPECT_EQ(none.median, 0.0);
  EXPECT_EQ(none.stddev, 0.0);
  EXPECT_EQ(median_of({}), 0.0);
}

// The median's bounds: the largest order k with at least 95% confidence (binomial sums by hand).
TEST(Stats, MedianBoundsAreTheOrderStatisticsOfTheConfidenceInterval) {
  for (std::size_t n : {0u, 1u, 2u, 5u, 6u, 8u}) EXPECT_EQ(median_bound_order(n), 1u) << n;
  EXPECT_EQ(median_bound_order(9), 2u);   // 1 - 2 * 10/512 = 96.1%; k = 3: 1 - 2 * 46/512 = 82%
  EXPECT_EQ(median_bound_order(10), 2u);  // 1 - 2 * 11/1024 = 97.9%; k = 3: 89.1%
  EXPECT_EQ(median_bound_order(20), 6u);  // 95.9%; k = 7: 88.5%
  EXPECT_NEAR(median_bound_confidence(20), 1 - 2 * 21700.0 / 1048576, 1e-12);  // sum C(20, i<6) = 21700
  EXPECT_GE(median_bound_confidence(1000), 0.95);
  EXPECT_EQ(median_bound_confidence(1), 0.0);
  // The bounds are the k-th smallest and largest of the values, whatever their order.
  std::mt19937_64 rng(test_seed());
  std::vector<double> v(10);
  for (auto& x : v) x = std::uniform_real_distribution<double>(1, 100)(rng);
  auto sorted = v;
  std::sort(sorted.begin(), sorted.end());
  std::shuffle(v.begin(), v.end(), rng);
  const auto s = compute_stats(v);
  EXPECT_EQ(s.lo, sorted[1]);
  EXPECT_EQ(s.hi, sorted[8]);
  const auto few = compute_stats({3.0, 1.0, 2.0});
  EXPECT_EQ(few.lo, 1.0);
  EXPECT_EQ(few.hi, 3.0);
  // Read back from a file that predates them: min and max.
  nlohmann::json old = {{"n", 3}, {"median", 2.0}, {"min", 1.0}, {"max", 3.0}, {"mean", 2.0}, {"stddev", 1.0}};
  const auto back = old.get<RepStats>();
  EXPECT_EQ(back.lo, 1.0);
  EXPECT_EQ(back.hi, 3.0);
}

// A shuffled arithmetic sequence a, a+d, ..., a+(n-1)d has closed forms for every statistic:
// median = mean = a + d(n-1)/2 and sample variance = d^2 n(n+1)/12.
TEST(Stats, ShuffledArithmeticSequences) {
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 60);
    const double a = static_cast<double>(rng() % 1000) / 8.0;
    const double d = static_cast<double>(1 + rng() % 50) / 4.0;
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(a + d * i);
    std::shuffle(v.begin(), v.end(), rng);
    const auto s = compute_stats(v);
    SCOPED_TRACE(testing::Message() << "n=" << n << " a=" << a << " d=" << d);
    EXPECT_EQ(s.n, static_cast<std::size_t>(n));
    EXPECT_DOUBLE_EQ(s.min, a);
    EXPECT_DOUBLE_EQ(s.max, a + d * (n - 1));
    EXPECT_NEAR(s.median, a + d * (n - 1) / 2.0, 1e-12 * (a + d * n));
    EXPECT_NEAR(s.mean, a + d * (n - 1) / 2.0, 1e-12 * (a + d * n));
    EXPECT_NEAR(s.stddev, d * std::sqrt(n * (n + 1) / 12.0), 1e-10 * d * n);
    EXPECT_DOUBLE_EQ(median_of(v), s.median);
  }
}

TEST(Stats, JsonRoundTrip) {
  const auto s = compute_stats({3.5, 1.25, 9.0, 2.0});
  nlohmann::json j = s;
  for (const char* key : {"n", "median", "min", "max", "mean", "stddev"}) EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["n"], 4);
  const auto back = j.get<RepStats>();
  EXPECT_EQ(back.n, s.n);
  EXPECT_EQ(back.median, s.median);
  EXPECT_EQ(back.min, s.min);
  EXPECT_EQ(back.max, s.max);
  EXPECT_EQ(back.mean, s.mean);
  EXPECT_EQ(back.stddev, s.stddev);
  j.erase("stddev");
  EXPECT_THROW(j.get<RepStats>(), nlohmann::json::exception);
}

}  // namespace
}  // namespace gpuscale

namespace gpuscale {
namespace {

TEST(Stats, ValuesNearTheLargestDoubleGiveFiniteStatistics) {
  const double big = std::numeric_limits<double>::max();
  const auto s = compute_stats({big, big, big * 0.5, big});
  EXPECT_TRUE(std::isfinite(s.mean)) << s.mean;
  EXPECT_TRUE(std::isfinite(s.stddev)) << s.stddev;
  EXPECT_EQ(s.median, big);
  EXPECT_DOUBLE_EQ(s.mean, big * 0.875);
  EXPECT_EQ(median_of({big, big}), big);
  EXPECT_EQ(median_of({-big, big}), 0);
  // Random inputs agree with the plain formulas where those do not overflow.
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(-1e6, 1e6);
  for (int t = 0; t < 100; ++t) {
    std::vector<double> v(1 + rng() % 40);
    for (auto& x : v) x = u(rng);
    double sum = 0;
    for (double x : v) sum += x;
    const double mean = sum / static_cast<double>(v.size());
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    const auto st = compute_stats(v);
    EXPECT_NEAR(st.mean, mean, 1e-9 * 1e6);
    if (v.size() > 1) {
      EXPECT_NEAR(st.stddev, std::sqrt(ss / static_cast<double>(v.size() - 1)), 1e-9 * 1e6);
    }
  }
}

}  // namespace
}  // namespace gpuscale
