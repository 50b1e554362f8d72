// core/iter_stats: nccl-tests 2.19's per-iteration summary (src/util.cu computeIterStats: p50 the upper
// median, p95/p99 by nearest rank, population stdev), -K's skip, spikes, and the straggler rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "test_seed.h"
#include "core/iter_stats.h"

namespace gpuscale {
namespace {

// The nearest-rank percentile by its definition: the smallest sample with at least p% of the samples at
// or below it (an oracle written apart from the index formula under test).
double nearest_rank(std::vector<double> s, double p) {
  std::sort(s.begin(), s.end());
  for (double v : s)
    if (static_cast<double>(std::count_if(s.begin(), s.end(), [&](double x) { return x <= v; })) >= p / 100.0 * s.size())
      return v;
  return s.back();
}

TEST(IterStats, HandComputed) {
  const auto st = iter_stats({40, 10, 30, 20}, 0);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->n, 4u);
  EXPECT_DOUBLE_EQ(st->p50, 30);  // sorted[n/2]: the upper median, as nccl-tests
  EXPECT_DOUBLE_EQ(st->p99, 40);  // under 100 samples p99 is the max (nccl-tests' -h says so)
  EXPECT_DOUBLE_EQ(st->min, 10);
  EXPECT_DOUBLE_EQ(st->avg, 25);
  EXPECT_NEAR(st->stdev, std::sqrt(125.0), 1e-12);  // population: sum of squares 500 over 4
  EXPECT_NEAR(st->cv_pct, std::sqrt(125.0) / 25 * 100, 1e-9);
  EXPECT_EQ(st->spikes, 0u);  // 40 is not over 1.5 x 30
}

TEST(IterStats, SkipLeavesLeadingSamplesOut) {
  // -K 1: the first (a cold start, 100) is not summarised; 16 > 1.5 x 10 is one spike (15 would not be).
  const auto st = iter_stats({100, 10, 10, 16, 10}, 1);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->n, 4u);
  EXPECT_DOUBLE_EQ(st->max, 16);
  EXPECT_EQ(st->spikes, 1u);
  EXPECT_FALSE(iter_stats({1, 2}, 2));  // nothing left
  EXPECT_FALSE(iter_stats({}, 0));
}

TEST(IterStats, RandomSeriesMatchTheDefinitions) {
  std::mt19937_64 rng(test_seed());
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 400)(rng);
    const std::size_t skip = std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
    std::lognormal_distribution<double> t(std::log(50e-6), 0.3);
    std::vector<double> series(n);
    for (auto& v : series) v = t(rng);
    for (std::size_t i = 0; i < skip; ++i) series[i] = 1.0;  // huge leading samples: the skip must drop them
    const auto st = iter_stats(series, skip);
    ASSERT_TRUE(st);
    const std::vector<double> kept(series.begin() + static_cast<std::ptrdiff_t>(skip), series.end());
    std::vector<double> sorted = kept;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(st->n, kept.size());
    EXPECT_DOUBLE_EQ(st->max, sorted.back());
    EXPECT_DOUBLE_EQ(st->min, sorted.front());
    EXPECT_DOUBLE_EQ(st->p99, nearest_rank(kept, 99));
    EXPECT_DOUBLE_EQ(st->p95, nearest_rank(kept, 95));
    EXPECT_DOUBLE_EQ(st->p50, sorted[sorted.size() / 2]);
    double mean = 0;
    for (double v : kept) mean += v / static_cast<double>(kept.size());
    double var = 0;
    for (double v : kept) var += (v - mean) * (v - mean) / static_cast<double>(kept.size());
    EXPECT_NEAR(st->avg, mean, 1e-12 * mean);
    EXPECT_NEAR(st->stdev, std::sqrt(var), 1e-9 * mean);
    EXPECT_EQ(st->spikes, static_cast<std::size_t>(std::count_if(kept.begin(), kept.end(), [&](double v) {
                return v > 1.5 * st->p50;
              })));
  }
}

TEST(IterStraggler, MostOftenSlowestTiesToLowerRank) {
  EXPECT_FALSE(iter_straggler({}, 0));
  const auto one = iter_straggler({3, 7, 7, 3, 7}, 0);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->rank, 7);
  EXPECT_EQ(one->iterations, 3u);
  EXPECT_DOUBLE_EQ(one->share, 0.6);
  EXPECT_EQ(iter_straggler({5, 2, 2, 5}, 0)->rank, 2);  // a tie: the lower rank
  EXPECT_EQ(iter_straggler({9, 9, 9, 1, 1}, 3)->rank, 1);  // the skipped iterations do not count
}

TEST(IterStraggler, PlantedRankWinsOverRandomNoise) {
  std::mt19937_64 rng(test_seed());
  for (int trial = 0; trial < 100; ++trial) {
    const int ranks = std::uniform_int_distribution<int>(2, 64)(rng);
    const int planted = std::uniform_int_distribution<int>(0, ranks - 1)(rng);
    const std::size_t iters = std::uniform_int_distribution<std::size_t>(5, 100)(rng);
    std::vector<double> times(static_cast<std::size_t>(ranks) * iters);
    std::uniform_real_distribution<double> noise(1.0, 1.2);
    for (int r = 0; r < ranks; ++r)
      for (std::size_t i = 0; i < iters; ++i)
        times[static_cast<std::size_t>(r) * iters + i] = noise(rng) * (r == planted ? 3.0 : 1.0);
    // Each iteration's slowest rank, as Group::max_each reduces them (by world rank, not index).
    std::vector<int> slowest(iters);
    for (std::size_t i = 0; i < iters; ++i) {
      int at = 0;
      for (int r = 1; r < ranks; ++r)
        if (times[static_cast<std::size_t>(r) * iters + i] > times[static_cast<std::size_t>(at) * iters + i]) at = r;
      slowest[i] = 100 + at;
    }
    const auto who = iter_straggler(slowest, 0);
    ASSERT_TRUE(who);
    EXPECT_EQ(who->rank, 100 + planted);
    EXPECT_DOUBLE_EQ(who->share, 1.0);
  }
}

// Each rank's own series travels only at the whole job's count of a job of 64 ranks or fewer, never at
// one rank: at 10,000 ranks rank 0 takes one series per group, not one per rank.
TEST(IterStats, RankSeriesKeptOnlyInSmallJobs) {
  EXPECT_FALSE(iter_rank_series_kept(1, 1));
  EXPECT_FALSE(iter_rank_series_kept(1, 64));
  EXPECT_TRUE(iter_rank_series_kept(4, 4));
  EXPECT_FALSE(iter_rank_series_kept(2, 4));  // a smaller count of a small job
  EXPECT_TRUE(iter_rank_series_kept(64, 64));
  EXPECT_FALSE(iter_rank_series_kept(2, 65));
  EXPECT_FALSE(iter_rank_series_kept(64, 10000));
  EXPECT_FALSE(iter_rank_series_kept(10000, 10000));
}

}  // namespace
}  // namespace gpuscale
