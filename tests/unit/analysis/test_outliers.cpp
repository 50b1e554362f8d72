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

#include <boost/math/distributions/students_t.hpp>

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

// The cut the rule's model gives, computed here from Student's t directly: df 0.37 (n - 1), the
// false-alarm rate shared by the J members judged.
double t_cut(std::size_t n, std::size_t judged, double false_alarm) {
  const double df = std::max(1.0, 0.37 * (static_cast<double>(n) - 1));
  return boost::math::quantile(boost::math::complement(boost::math::students_t(df), false_alarm / static_cast<double>(judged)));
}

TEST(Outliers, TheBarIsTheWidestOfNoiseRepetitionsMinEffectAndTheFixedFloor) {
  // Values 100 x 7 and one at 70: median 100, MAD 0, no spread -> --min-effect (3%) sets the bar; a
  // fixed floor (--outlier 0.1) wider than it sets it instead.
  std::vector<OutlierSample> s;
  for (int i = 0; i < 7; ++i) s.push_back(exact(i, 100));
  s.push_back(exact(7, 70));
  auto f = outlier_floor(s, {});
  EXPECT_DOUBLE_EQ(f.median, 100);
  EXPECT_DOUBLE_EQ(f.mad, 0);
  EXPECT_NEAR(f.floor, 97, 1e-9);
  OutlierRule fixed;
  fixed.fraction = 0.1;
  EXPECT_NEAR(outlier_floor(s, fixed).floor, 90, 1e-9);
  // 21 values 95..105 step 0.5: MAD 2.5 -> sigma 1.4826 x 21/20.2 x 2.5 / 100, the cut t(0.37 x 20) at
  // 1% over the 21 judged, or over 1000 judged in the whole run.
  std::vector<OutlierSample> wide;
  for (int i = 0; i < 21; ++i) wide.push_back(exact(i, 95 + 0.5 * i));
  const double sigma = 1.4826 * (21 / 20.2) * 2.5 / 100;
  EXPECT_DOUBLE_EQ(outlier_floor(wide, {}).mad, 2.5);
  f = outlier_floor(wide, {});
  EXPECT_NEAR(f.sigma, sigma, 1e-12);
  EXPECT_NEAR(f.z, t_cut(21, 21, 0.01), 1e-9);
  EXPECT_NEAR(f.floor, 100 * (1 - t_cut(21, 21, 0.01) * sigma), 1e-9);
  OutlierRule run;
  run.judged = 1000;
  EXPECT_NEAR(outlier_floor(wide, run).z, t_cut(21, 1000, 0.01), 1e-9);
  EXPECT_GT(outlier_floor(wide, run).bar, f.bar);  // more members judged: a wider bar
  // A typical repetition spread of 70% below the value widens it further.
  for (auto& x : wide) x.spread_down = 0.7;
  EXPECT_NEAR(outlier_floor(wide, {}).floor, 30, 1e-9);
  // Too few samples: no floor, nothing named.
  EXPECT_EQ(outlier_floor({exact(0, 100), exact(1, 10)}, {}).population, 0u);
  EXPECT_TRUE(find_outliers(OutlierKind::group, {exact(0, 100), exact(1, 10)}, {}).empty());
}

// The MAD the rule reads, from the deviations: two-sided, then the slow side's within [1, 2] times it.
double sided_mad(const std::vector<OutlierSample>& s, double median) {
  std::vector<double> all, below;
  for (const auto& x : s) {
    all.push_back(std::abs(x.value - median));
    if (x.value < median) below.push_back(median - x.value);
  }
  const double two = median_of(all);
  return std::min(std::max(median_of(below), two), 2 * two);
}

TEST(Outliers, ASlowSideLongerThanTheFastSideIsReadByItsOwnSpread) {
  // 81 values, median 100: 40 above it within 1, 40 below it within 4 (as a pair matrix's min()
  // makes). The slow side's median deviation (2.05) is wider than the two-sided MAD (0.8): it is
  // read, up to twice the MAD.
  std::vector<OutlierSample> s;
  s.push_back(exact(0, 100));
  for (int i = 1; i <= 40; ++i) s.push_back(exact(i, 100 + i / 40.0));
  for (int i = 1; i <= 40; ++i) s.push_back(exact(40 + i, 100 - i / 10.0));
  const auto f = outlier_floor(s, {});
  EXPECT_NEAR(f.mad, sided_mad(s, 100), 1e-12);
  EXPECT_NEAR(f.mad, 1.6, 1e-9);
  // A slow side only a little longer is read as it is: 40 below within 1.2 (median deviation 0.615).
  for (int i = 1; i <= 40; ++i) s[static_cast<std::size_t>(40 + i)].value = 100 - 0.03 * i;
  EXPECT_NEAR(outlier_floor(s, {}).mad, 0.615, 1e-9);
  EXPECT_NEAR(outlier_floor(s, {}).mad, sided_mad(s, 100), 1e-12);
  // Fewer than 16 below: the two-sided MAD alone.
  std::vector<OutlierSample> small(s.begin(), s.begin() + 31);
  for (int i = 1; i <= 15; ++i) small[static_cast<std::size_t>(15 + i)].value = 100 - i;
  std::vector<double> small_all;
  const double m = outlier_floor(small, {}).median;
  for (const auto& x : small) small_all.push_back(std::abs(x.value - m));
  EXPECT_NEAR(outlier_floor(small, {}).mad, median_of(small_all), 1e-12);
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
  for (int i = 0; i < 31; ++i) s.push_back(exact(i, 100 + 0.1 * i));  // 100..103 and 80: median 101.45
  s.push_back(exact(31, 80));
  const auto o = find_outliers(OutlierKind::group, s, {});
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].kind, OutlierKind::group);
  EXPECT_EQ(o[0].ranks, std::vector<int>{31});
  EXPECT_EQ(o[0].hosts, std::vector<std::string>{"h31"});
  EXPECT_DOUBLE_EQ(o[0].median, 101.45);
  EXPECT_NEAR(o[0].deficit, 1 - 80.0 / 101.45, 1e-12);
  EXPECT_NE(o[0].reason.find("below the median of 32 groups"), std::string::npos);
  // 2.5% below is under --min-effect (3%); a fixed floor of 25% keeps the 21% deficit too.
  s[31].value = 99;
  EXPECT_TRUE(find_outliers(OutlierKind::group, s, {}).empty());
  s[31].value = 80;
  EXPECT_TRUE(find_outliers(OutlierKind::group, s, {0.25}).empty());
  // Its own repetitions reaching the normal range (best one 80 x 1.3 = 104 > the floor) make it noise.
  s[31].spread_up = 0.3;
  EXPECT_TRUE(find_outliers(OutlierKind::group, s, {}).empty());
  // Unmeasured samples (NaN, 0) are not in the population and are never named.
  s[31].spread_up = 0;
  s.push_back(exact(32, std::numeric_limits<double>::quiet_NaN()));
  s.push_back(exact(33, 0));
  EXPECT_EQ(find_outliers(OutlierKind::group, s, {}).size(), 1u);
}

TEST(Outliers, PlantedSlowHostFoundInRandomNoise) {
  // Seeded populations of 12 to 64 with up to 5% spread between samples and 5% between repetitions;
  // one sample planted at half speed (slow-host:NAME:2) is the only one named, in every trial. (Fewer
  // members leave a bar that the rule's false-alarm rate may put beyond half: the power says so.)
  std::mt19937_64 gen(20261201);
  for (int trial = 0; trial < 500; ++trial) {
    const int n = std::uniform_int_distribution<int>(12, 64)(gen);
    const int reps = std::uniform_int_distribution<int>(3, 10)(gen);
    const double a = std::uniform_real_distribution<double>(0, 0.05)(gen);
    const double w = std::uniform_real_distribution<double>(0, 0.05)(gen);
    const int planted = std::uniform_int_distribution<int>(0, n - 1)(gen);
    std::uniform_real_distribution<double> shift(-a, a);
    std::vector<OutlierSample> s;
    for (int i = 0; i < n; ++i) s.push_back(measured(gen, i, i == planted ? 50 : 100, shift(gen), w, reps));
    const auto o = find_outliers(OutlierKind::node, s, {});
    const auto f = outlier_floor(s, {});
    ASSERT_EQ(o.size(), 1u) << "trial " << trial << " n " << n << " sigma " << f.sigma << " z " << f.z << " bar " << f.bar
                            << " spread_down " << f.typical_spread_down;
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

TEST(Outliers, HeavyRepetitionNoiseNamesAtMostTheFalseAlarmRate) {
  // Populations of 8..64 samples (groups of a count, nodes) 5% apart at most, each measured 5..10
  // times with up to 30% noise per repetition: the noise's bar and the repetition spread absorb it,
  // so at most the rule's false-alarm rate (1%) of the 20000 seeded trials name anything.
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
    named += find_outliers(OutlierKind::group, s, {}).empty() ? 0 : 1;
  }
  EXPECT_LE(named, 200u);
}

// Normal noise, as the rule's model assumes: in clean populations of 12 to 512, the share of trials
// naming anything stays within the false-alarm rate set (here 5%, to count it in 4000 trials); and a
// member planted slower by the power the clean population states (its `detectable`) is named in at
// least 95% of trials (93%: 4000 trials' binomial margin).
TEST(Outliers, TheFalseAlarmRateAndTheStatedPowerHoldOnNormalNoise) {
  std::mt19937_64 gen(test_seed());
  OutlierRule rule;
  rule.false_alarm = 0.05;
  rule.min_effect = 0;
  int clean_named = 0, planted_named = 0, trials = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const int n = std::uniform_int_distribution<int>(12, 512)(gen);
    const double sigma = std::uniform_real_distribution<double>(0.002, 0.05)(gen);
    std::normal_distribution<double> own(1.0, sigma);
    std::vector<OutlierSample> s;
    for (int i = 0; i < n; ++i) s.push_back(exact(i, 100 * own(gen)));
    clean_named += find_outliers(OutlierKind::group, s, rule).empty() ? 0 : 1;
    const auto f = outlier_floor(s, rule);
    if (!(f.detectable < 1)) continue;
    const int planted = std::uniform_int_distribution<int>(0, n - 1)(gen);
    s[static_cast<std::size_t>(planted)].value = 100 * own(gen) * (1 - f.detectable);
    ++trials;
    for (const auto& o : find_outliers(OutlierKind::group, s, rule)) planted_named += o.ranks == std::vector<int>{planted};
  }
  EXPECT_LE(clean_named, 4000 * 0.05 * 1.15) << clean_named;
  ASSERT_GT(trials, 3000);
  EXPECT_GE(planted_named, 0.93 * trials) << planted_named << " of " << trials;
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
  for (int n : {8, 16, 64}) {  // at 5 nodes a sick one's pairs are 40% of all: beyond the MAD's reach
    const int sick = n / 2;
    auto m = matrix(n, gen, 40, [&](int i, int j) { return i == sick || j == sick ? 0.5 : 1.0; });
    const auto o = matrix_outliers(m, OutlierKind::node, {});
    ASSERT_EQ(o.size(), 1u) << n;
    EXPECT_EQ(o[0].kind, OutlierKind::node);
    EXPECT_EQ(o[0].hosts, std::vector<std::string>{"node" + std::to_string(sick)});
    EXPECT_EQ(o[0].ranks, (std::vector<int>{2 * sick, 2 * sick + 1}));
    EXPECT_NEAR(o[0].deficit, 0.5, 0.05);
    EXPECT_NE(o[0].reason.find("the node is suspect, not its links"), std::string::npos) << o[0].reason;
  }
}

TEST(Outliers, OneSlowPairIsALink) {
  std::mt19937_64 gen(12);
  for (int n : {8, 32}) {
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
            (i == 5 || j == 5 ? 200 : (i == 1 && j == 2 ? 250 : 400)) * (1 + noise(gen));
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
