// history/level_steps.h: the level-shift test, its tables, and the segmentation.
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <random>

#include <gtest/gtest.h>

#include "test_seed.h"
#include "history/level_steps.h"
#include "level_noise_draws.h"

namespace gpuscale::history {
namespace {

NoiseBand band(double rel, std::size_t reps = 10) { return {rel, rel, reps}; }

std::vector<LevelPoint> points(const std::vector<double>& values, double own = 0.01) {
  std::vector<LevelPoint> p;
  for (const double v : values) p.push_back({v, band(own)});
  return p;
}

TEST(LevelSteps, TablesMatchASimulation) {
  // c(m) x median |difference| averages sigma, and z exceeds q(m) in kStepAlpha of the draws (the tables
  // came from 2,000,000 draws each; 100,000 here, so a right table fails with probability below 1e-6
  // per m: bounds at 5 standard errors).
  std::mt19937_64 rng(test_seed());
  for (const std::size_t m : {1, 2, 3, 5, 10, 30}) {
    const int draws = 100000;
    std::vector<double> medians, z;
    draw_noise_only(rng, m, draws, medians, z);
    EXPECT_EQ(run_noise(std::vector<LevelPoint>(m + 2, {100, band(0)}), 0, m + 2, m + 1).differences, m);
    double sigma = 0;
    int over = 0;
    for (int d = 0; d < draws; ++d) {
      const double c = noise_scale_factor(m);
      sigma += c * medians[static_cast<std::size_t>(d)];
      over += z[static_cast<std::size_t>(d)] / c > step_critical_value(m);
    }
    const double expected = kStepAlpha * draws, se = std::sqrt(expected * (1 - kStepAlpha));
    EXPECT_NEAR(sigma / draws / 0.05, 1, 0.02) << "c(" << m << ")";
    EXPECT_NEAR(over, expected, 5 * se) << "q(" << m << ") = " << step_critical_value(m);
  }
  // Beyond the table both move monotonically to their limits.
  EXPECT_GT(step_critical_value(31), step_critical_value(1000));
  EXPECT_NEAR(step_critical_value(1000000), 2.807, 1e-3);
  EXPECT_NEAR(noise_scale_factor(1000000), 1.0483, 1e-3);
}

TEST(LevelSteps, ShiftBandIsTheRunToRunNoiseBesideTheOwnBands) {
  // Before: 100 102 99 101 (differences of 2-3%); after: one point of 50.
  const auto p = points({100, 102, 99, 101, 50}, 0.01);
  const RunNoise noise = run_noise(p, 0, 5, 4);
  EXPECT_EQ(noise.differences, 3u);  // the step's own difference (101 -> 50) is left out
  const double sigma = noise_scale_factor(3) * std::log(101.0 / 99);  // the median of 2.0%, 2.0% and 3.0%
  EXPECT_NEAR(noise.sigma, sigma, 1e-12);
  EXPECT_EQ(run_noise(p, 0, 5).differences, 4u);
  const auto s = level_shift(p, 0, 4, 5, Better::higher, noise);
  EXPECT_EQ(s.before.runs, 4u);
  EXPECT_EQ(s.after.runs, 1u);
  // An even count: the middle value nearer the other side's median (100 of 100 and 101).
  EXPECT_DOUBLE_EQ(s.before.median, 100);
  EXPECT_DOUBLE_EQ(s.after.median, 50);
  const double h = step_critical_value(3) * sigma * std::sqrt(M_PI / 8 + 1);
  EXPECT_NEAR(s.before.band.down, 1 - std::exp(-h), 1e-12);
  EXPECT_NEAR(s.before.band.up, std::exp(h) - 1, 1e-12);
  EXPECT_NEAR(s.after.band.down, 0.01, 1e-12);  // the later side keeps its own band
  EXPECT_NEAR(s.change.ratio, 0.5, 1e-12);
  EXPECT_NEAR(s.change.hi, 0.5 * 1.01 * std::exp(h), 1e-12);
  EXPECT_NEAR(s.z, std::log(2) / (sigma * std::sqrt(M_PI / 8 + 1)), 1e-9);
  // Without any difference no run-to-run noise is known: nothing is judged.
  EXPECT_FALSE(level_shift(points({100, 50}), 0, 1, 2, Better::higher, run_noise(p, 0, 1)).change.noise_known);
}

TEST(LevelSteps, OneOddRunMovesNeitherTheLevelNorTheNoise) {
  // The median holds against one odd run; it spoils 2 of the 10 differences, so the noise holds too.
  const auto p = points({100, 101, 99, 100, 40, 101, 100, 99, 100, 101, 10});
  const RunNoise noise = run_noise(p, 0, p.size(), 10);
  EXPECT_LT(noise.sigma, 0.015);
  EXPECT_DOUBLE_EQ(level_shift(p, 0, 10, 11, Better::higher, noise).before.median, 100);
  EXPECT_EQ(level_steps(p, Better::higher, 0.1), std::vector<std::size_t>{10});
}

TEST(LevelSteps, SegmentsAStepDownAndItsRecovery) {
  std::mt19937_64 rng(test_seed());
  std::uniform_real_distribution<double> jitter(-0.02, 0.02);
  std::vector<double> v;
  for (int i = 0; i < 15; ++i) v.push_back((i >= 5 && i < 10 ? 40 : 100) * (1 + jitter(rng)));
  EXPECT_EQ(level_steps(points(v), Better::higher, 0.1), (std::vector<std::size_t>{5, 10}));
  // The newest point alone is a segment of its own on the day it steps.
  v.push_back(5);
  EXPECT_EQ(level_steps(points(v), Better::higher, 0.1), (std::vector<std::size_t>{5, 10, 15}));
  // Within the threshold no step is made, however sure.
  EXPECT_TRUE(level_steps(points({100, 100, 100, 95, 95, 95}, 0.001), Better::higher, 0.1).empty());
  EXPECT_EQ(level_steps(points({100, 100, 100, 95, 95, 95}, 0.001), Better::higher, 0.01), std::vector<std::size_t>{3});
}

TEST(LevelSteps, ShortSeries) {
  EXPECT_TRUE(level_steps({}, Better::higher, 0.1).empty());
  EXPECT_TRUE(level_steps(points({100}), Better::higher, 0.1).empty());
  EXPECT_TRUE(level_steps(points({100, 1}), Better::higher, 0.1).empty());  // a step needs 2 runs before it
  EXPECT_EQ(level_steps(points({100, 101, 1}), Better::higher, 0.1), std::vector<std::size_t>{2});
  // Two runs say little of the run-to-run noise (q(1) is about 100): a halving after them is no step.
  EXPECT_TRUE(level_steps(points({100, 101, 50}), Better::higher, 0.1).empty());
}

TEST(LevelSteps, ReferenceLevelIsTheBandOfOneNewPoint) {
  const auto p = points({100, 104, 96, 102, 98}, 0.02);
  const auto l = reference_level(p, 0, 5);
  EXPECT_DOUBLE_EQ(l.median, 100);
  EXPECT_EQ(l.runs, 5u);
  std::vector<double> d = {std::log(104.0 / 100), std::log(104.0 / 96), std::log(102.0 / 96), std::log(102.0 / 98)};
  std::sort(d.begin(), d.end());
  const double h = step_critical_value(4) * noise_scale_factor(4) * (d[1] + d[2]) / 2 * std::sqrt(M_PI / 10 + 1);
  EXPECT_NEAR(l.band.down, 1 - std::exp(-h), 1e-12);
  EXPECT_NEAR(l.band.up, std::exp(h) - 1, 1e-12);
  EXPECT_NEAR(reference_level(p, 0, 1).band.down, 0.02, 1e-12);  // one run: its own band alone
}

}  // namespace
}  // namespace gpuscale::history
