// analysis/outliers: the floor (fraction, MAD band, repetition spread), planted outliers found alone,
// pure noise never named (seeded random populations, many trials), node-versus-link attribution in
// a node-pair matrix and a GPU-pair matrix, and the JSON record.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_seed.h"
#include "analysis/outliers.h"
#include "core/stats.h"

namespace gpuscale {
namespace {

// A sample from `reps` repetitions around `level` x (1 + shift), each with uniform noise of +-w.
OutlierSample measured(std::mt19937_64& gen, int id, double level, double shift, double w, int reps) {
  std::uniform_real_distribution<double> u(-w, w);
  std::vector<double> r;
  for (int i = 0; i < reps; ++i) r.push_back(level * (1 + shift) * (1 + u(gen)));
  OutlierSample s;
  s.hosts = {"h" + std::to_string(id)};
  s.ranks = {id};
  s.value = median_of(r);
  s.spread_down = (s.value - *std::min_element(r.begin(), r.end())) / s.value;
  s.spread_up = (*std::max_element(r.begin(), r.end()) - s.value) / s.value;
  return s;
}

OutlierSample exact(int id, double value) {
  OutlierSample s;
  s.hosts = {"h" + std::to_string(id)};
  s.ranks = {id};
  s.value = value;
  return s;
}

TEST(Outliers, FloorIsTheWidestOfFractionMadAndSpread) {
  // Values 100 x 7 and one at 70: median 100, MAD 0, no spread -> the fraction (10%) sets the floor.
  std::vector<OutlierSample> s;
  for (int i = 0; i < 7; ++i) s.push_back(exact(i, 100));
  s.push_back(exact(7, 70));
  auto f = outlier_floor(s, {});
  EXPECT_DOUBLE_EQ(f.median, 100);
  EXPECT_DOUBLE_EQ(f.mad, 0);
  EXPECT_DOUBLE_EQ(f.floor, 90);
  // {80, 90, 100, 110, 120}: MAD 10 -> band 3.5 x 1.4826 x 1.206 (5 samples) x 10 = 62.58 below 100.
  std::vector<OutlierSample> wide;
  for (int i = 0; i < 5; ++i) wide.push_back(exact(i, 80 + 10 * i));
  f = outlier_floor(wide, {});
  EXPECT_NEAR(f.floor, 100 - 3.5 * 1.4826 * 1.206 * 10, 1e-9);
  // A typical repetition spread of 70% below the value widens it further.
  for (auto& x : wide) x.spread_down = 0.7;
  EXPECT_NEAR(outlier_floor(wide, {}).floor, 30, 1e-9);
  // Too few samples: no floor, nothing named.
  EXPECT_EQ(outlier_floor({exact(0, 100), exact(1, 10)}, {}).population, 0u);
  EXPECT_TRUE(find_outliers(OutlierKind::group, {exact(0, 100), exact(1, 10)}, {}).empty());
}

// Figures near DBL_MAX: the median and the MAD are computed without overflow, and a MAD band past the
// largest double leaves a finite floor (0) and names nothing, rather than inf or nan in a message.
TEST(Outliers, FiguresNearTheLargestDoubleKeepAFiniteFloor) {
  std::mt19937_64 gen(test_seed());
  const double big = std::numeric_limits<double>::max();
  std::vector<OutlierSample> s;
  const int n = 5 + static_cast<int>(gen() % 10);
  for (int i = 0; i < n; ++i) s.push_back(exact(i, i % 2 ? big : big / (2 + static_cast<double>(gen() % 8))));
  const auto f = outlier_floor(s, {});
  EXPECT_TRUE(std::isfinite(f.median)) << f.median;
  EXPECT_TRUE(std::isfinite(f.mad)) << f.mad;
  EXPECT_TRUE(std::isfinite(f.floor)) << f.floor;
  EXPECT_GE(f.floor, 0);
  for (const auto& o : find_outliers(OutlierKind::group, s, {})) {
    EXPECT_TRUE(std::isfinite(o.deficit)) << o.reason;
    EXPECT_EQ(o.reason.find("inf"), std::string::npos) << o.reason;
    EXPECT_EQ(o.reason.find("nan"), std::string::npos) << o.reason;
  }
}

TEST(Outliers, PlantedOutlierIsNamedAlone) {
  std::vector<OutlierSample> s;
  for (int i = 0; i < 7; ++i) s.push_back(exact(i, 100 + i));  // 100..106 and 80: median 102.5
  s.push_back(exact(7, 80));
  const auto o = find_outliers(OutlierKind::group, s, {});
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].kind, OutlierKind::group);
  EXPECT_EQ(o[0].ranks, std::vector<int>{7});
  EXPECT_EQ(o[0].hosts, std::vector<std::string>{"h7"});
  EXPECT_DOUBLE_EQ(o[0].median, 102.5);
  EXPECT_NEAR(o[0].deficit, 1 - 80.0 / 102.5, 1e-12);
  EXPECT_NE(o[0].reason.find("below the median of 8 groups"), std::string::npos);
  // 5% below is within --outlier 0.10; with --outlier 0.25 the 22% deficit is not enough either.
  s[7].value = 98;
  EXPECT_TRUE(find_outliers(OutlierKind::group, s, {}).empty());
  s[7].value = 80;
  EXPECT_TRUE(find_outliers(OutlierKind::group, s, {0.25}).empty());
  // Its own repetitions reaching the normal range (best one 80 x 1.2 = 96 > floor 90.8) make it noise.
  s[7].spread_up = 0.2;
  EXPECT_TRUE(find_outliers(OutlierKind::group, s, {}).empty());
  // Unmeasured samples (NaN, 0) are not in the population and are never named.
  s[7].spread_up = 0;
  s.push_back(exact(8, std::numeric_limits<double>::quiet_NaN()));
  s.push_back(exact(9, 0));
  EXPECT_EQ(find_outliers(OutlierKind::group, s, {}).size(), 1u);
}

TEST(Outliers, PlantedSlowHostFoundInRandomNoise) {
  // Seeded populations with up to 5% spread between samples and 5% between repetitions; one sample
  // planted at half speed (slow-host:NAME:2) is the only one named, in every trial.
  std::mt19937_64 gen(20261201);
  for (int trial = 0; trial < 500; ++trial) {
    const int n = std::uniform_int_distribution<int>(4, 64)(gen);
    const int reps = std::uniform_int_distribution<int>(3, 10)(gen);
    const double a = std::uniform_real_distribution<double>(0, 0.05)(gen);
    const double w = std::uniform_real_distribution<double>(0, 0.05)(gen);
    const int planted = std::uniform_int_distribution<int>(0, n - 1)(gen);
    std::uniform_real_distribution<double> shift(-a, a);
    std::vector<OutlierSample> s;
    for (int i = 0; i < n; ++i) s.push_back(measured(gen, i, i == planted ? 50 : 100, shift(gen), w, reps));
    const auto o = find_outliers(OutlierKind::node, s, {});
    ASSERT_EQ(o.size(), 1u) << "trial " << trial;
    EXPECT_EQ(o[0].ranks, std::vector<int>{planted});
    EXPECT_NEAR(o[0].deficit, 0.5, 0.1);
  }
}

TEST(Outliers, NoiseWithinTheFractionNamesNothing) {
  // Any population of 3..64 samples whose values, repetitions included, stay within 0.9524..1.0486
  // of the level, so no value is 10% below any median: nothing may be named, whatever the MAD.
  std::mt19937_64 gen(5);
  std::size_t named = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const int n = std::uniform_int_distribution<int>(3, 64)(gen);
    const int reps = std::uniform_int_distribution<int>(1, 10)(gen);
    const double a = std::uniform_real_distribution<double>(0, 0.024)(gen);
    const double w = std::uniform_real_distribution<double>(0, 0.024)(gen);
    std::uniform_real_distribution<double> shift(-a, a);
    std::vector<OutlierSample> s;
    for (int i = 0; i < n; ++i) s.push_back(measured(gen, i, 100, shift(gen), w, reps));
    named += find_outliers(OutlierKind::group, s, {}).size();
  }
  EXPECT_EQ(named, 0u);
}

TEST(Outliers, HeavyRepetitionNoiseNamesNothing) {
  // Populations of 8..64 samples (groups of a count, nodes) 5% apart at most, each measured 5..10
  // times with up to 30% noise per repetition, three times --outlier: the MAD band and the repetition
  // spread absorb it. 20000 seeded trials.
  std::mt19937_64 gen(7);
  std::size_t named = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const int n = std::uniform_int_distribution<int>(8, 64)(gen);
    const int reps = std::uniform_int_distribution<int>(5, 10)(gen);
    const double a = std::uniform_real_distribution<double>(0, 0.05)(gen);
    const double w = std::uniform_real_distribution<double>(0, 0.3)(gen);
    std::uniform_real_distribution<double> shift(-a, a);
    std::vector<OutlierSample> s;
    for (int i = 0; i < n; ++i) s.push_back(measured(gen, i, 100, shift(gen), w, reps));
    named += find_outliers(OutlierKind::group, s, {}).size();
  }
  EXPECT_EQ(named, 0u);
}

// An n x n node-pair matrix of `good` with noise, values below it for the pairs `slow` says.
PairMatrix matrix(int n, std::mt19937_64& gen, double good, const std::function<double(int, int)>& factor) {
  PairMatrix m;
  std::uniform_real_distribution<double> noise(-0.03, 0.03);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  m.values.assign(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(n), nan));
  for (int i = 0; i < n; ++i) {
    m.hosts.push_back("node" + std::to_string(i));
    m.ranks.push_back({2 * i, 2 * i + 1});
    for (int j = i + 1; j < n; ++j) m.values[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = good * factor(i, j) * (1 + noise(gen));
  }
  return m;
}

TEST(Outliers, SlowNodeIsTheSuspectNotItsLinks) {
  std::mt19937_64 gen(11);
  for (int n : {5, 8, 16, 64}) {
    const int sick = n / 2;
    auto m = matrix(n, gen, 40, [&](int i, int j) { return i == sick || j == sick ? 0.5 : 1.0; });
    const auto o = matrix_outliers(m, OutlierKind::node, {});
    ASSERT_EQ(o.size(), 1u) << n;
    EXPECT_EQ(o[0].kind, OutlierKind::node);
    EXPECT_EQ(o[0].hosts, std::vector<std::string>{"node" + std::to_string(sick)});
    EXPECT_EQ(o[0].ranks, (std::vector<int>{2 * sick, 2 * sick + 1}));
    EXPECT_NEAR(o[0].deficit, 0.5, 0.05);
    EXPECT_NE(o[0].reason.find(std::to_string(n - 1) + " of its " + std::to_string(n - 1)), std::string::npos);
  }
}

TEST(Outliers, OneSlowPairIsALink) {
  std::mt19937_64 gen(12);
  for (int n : {4, 8, 32}) {
    auto m = matrix(n, gen, 40, [](int i, int j) { return i == 1 && j == 2 ? 0.6 : 1.0; });
    const auto o = matrix_outliers(m, OutlierKind::node, {});
    ASSERT_EQ(o.size(), 1u) << n;
    EXPECT_EQ(o[0].kind, OutlierKind::pair);
    EXPECT_EQ(o[0].hosts, (std::vector<std::string>{"node1", "node2"}));
    EXPECT_EQ(o[0].ranks, (std::vector<int>{2, 3, 4, 5}));
  }
  // A slow node and, elsewhere, one slow link: both named, each as what it is.
  auto m = matrix(10, gen, 40, [](int i, int j) { return i == 7 || j == 7 ? 0.5 : (i == 0 && j == 3 ? 0.7 : 1.0); });
  const auto o = matrix_outliers(m, OutlierKind::node, {});
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].kind, OutlierKind::node);
  EXPECT_EQ(o[0].hosts, std::vector<std::string>{"node7"});
  EXPECT_EQ(o[1].kind, OutlierKind::pair);
  EXPECT_EQ(o[1].hosts, (std::vector<std::string>{"node0", "node3"}));
}

TEST(Outliers, NoisyMatrixAndPartialMatrixNameNothing) {
  std::mt19937_64 gen(13);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = std::uniform_int_distribution<int>(2, 24)(gen);
    auto m = matrix(n, gen, 40, [](int, int) { return 1.0; });
    // Sampled rounds leave pairs unmeasured: blank a random half of them.
    for (auto& row : m.values)
      for (auto& v : row)
        if (std::uniform_int_distribution<int>(0, 1)(gen) == 0) v = std::numeric_limits<double>::quiet_NaN();
    EXPECT_TRUE(matrix_outliers(m, OutlierKind::node, {}).empty());
  }
}

TEST(Outliers, DirectedGpuPairMatrix) {
  // 8 GPUs of one host, copies src -> dst; GPU 5 slow in both directions, GPU 1 -> 2 slow alone.
  PairMatrix m;
  m.directed = true;
  std::mt19937_64 gen(14);
  std::uniform_real_distribution<double> noise(-0.02, 0.02);
  m.values.assign(8, std::vector<double>(8, 0));
  for (int i = 0; i < 8; ++i) {
    m.hosts.push_back("gpu-node");
    m.ranks.push_back({i});
    for (int j = 0; j < 8; ++j)
      if (i != j)
        m.values[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] =
            (i == 5 || j == 5 ? 200 : (i == 1 && j == 2 ? 300 : 400)) * (1 + noise(gen));
  }
  const auto o = matrix_outliers(m, OutlierKind::gpu, {});
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].kind, OutlierKind::gpu);
  EXPECT_EQ(o[0].ranks, std::vector<int>{5});
  EXPECT_EQ(o[1].kind, OutlierKind::pair);
  EXPECT_EQ(o[1].ranks, (std::vector<int>{1, 2}));
  // Undirected reading of the same table ignores the lower triangle: 1 -> 2 is still the one link.
  m.directed = false;
  const auto u = matrix_outliers(m, OutlierKind::gpu, {});
  ASSERT_EQ(u.size(), 2u);
  EXPECT_EQ(u[1].ranks, (std::vector<int>{1, 2}));
}

TEST(Outliers, BadMatrixShapeThrowsAndJsonRecord) {
  PairMatrix m;
  m.hosts = {"a", "b", "c"};
  m.values.assign(3, std::vector<double>(2, 1));
  EXPECT_THROW(matrix_outliers(m, OutlierKind::node, {}), std::invalid_argument);
  Outlier o{OutlierKind::pair, {"a", "b"}, {0, 1}, 20, 40, 0.5, "why"};
  const auto j = outlier_json(o);
  EXPECT_EQ(j["kind"], "pair");
  EXPECT_EQ(j["hosts"], nlohmann::json({"a", "b"}));
  EXPECT_EQ(j["ranks"], nlohmann::json({0, 1}));
  EXPECT_DOUBLE_EQ(j["deficit"].get<double>(), 0.5);
  EXPECT_EQ(j["reason"], "why");
  EXPECT_EQ(j.size(), 7u);
}

}  // namespace
}  // namespace gpuscale
