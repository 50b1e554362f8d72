#pragma once
// Steps in a series' level (pure; tests/unit/history/test_level_steps.cpp). docs/history.md, "Regressions".
//
// The method, in the way of the change-point detection of performance-CI tools (MongoDB's E-divisive
// means, Apache Otava/Hunter), in two passes. First, binary segmentation places candidate steps: in
// each part the split that maximises the E-divisive energy statistic (alpha = 1) of the log values,
// down to parts of 2-3 points, and the newest point alone. Then the least sure candidate is merged
// away, again and again, until each one left is a step, either way, between the segments on either
// side of it by the robust level-shift test below (beyond the noise and the threshold). As in Otava a
// parametric test decides (deterministic: no permutations), here one on medians with a MAD-type noise
// scale instead of Welch's t on means, so that one odd run moves neither a level nor the noise. The
// second pass finds what one pass of medians would not: in "100 100 40 40 100 100" each side of the
// first split has the median 100.
//
// The test, in log values (a step is a ratio): each side's level is its median (of an even count, the
// middle value nearer the other side's median, so a shift is never overstated); the run-to-run noise
// sigma is c(m) x the median of the m absolute differences between consecutive points of the whole
// series but the one across the step tested (run_noise); the band of the comparison is q(m) x sigma x
// sqrt(se(X)^2 + se(Y)^2), se(k)^2 = 1/k for k <= 2 points and pi / (2k) above (the variance of a
// median), and q(m) is the two-sided 99.5% point of that statistic for m + 1 points against one more
// under Gaussian noise (simulated; kStepAlpha). That band is put on the earlier side beside its points'
// own repetition bands (the wider wins), the later side keeps its points' own bands, and compare's
// noise rule judges the pair (analysis/compare.h): worse (or better) beyond both bands and the
// threshold.
//
// Segments have 2 points or more, except the newest, which may be one point (the day a step happens
// is judged at once). So a step needs 2 points before it and its one newest point after it.
// False alarms: one test at threshold 0 on Gaussian noise says "step" with probability kStepAlpha; the
// whole rule names a regression in about 0.5-1% of noise-only series at threshold 0 and in almost none
// at the default threshold 0.1 while the noise is under 10% (docs/history.md, "Regressions", has the
// measured rates; TEST(Trend, FalseAlarmRateOfNoiseOnlySeries) measures them).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/noise.h"

namespace gpuscale::history {

// The probability that one step test calls Gaussian noise a step (at threshold 0, own bands of 0).
inline constexpr double kStepAlpha = 0.005;

struct LevelPoint {
  double value = 0;  // > 0
  NoiseBand band;    // its own repetitions' band
};

// A run of consecutive points taken as one level.
struct Level {
  double median = 0;
  NoiseBand band;  // the widest of its points' own bands (reps: the fewest); the earlier side's also holds the run-to-run noise
  std::size_t runs = 0;
};

// The run-to-run noise of a series for the test of a step: sigma = c(m) x the median of the m absolute
// log differences between consecutive points of [begin, end), leaving out the one across the step
// (from point step - 1 to point step: it holds the step, not the noise). Another step or an odd run
// spoils one or two of them, so the median holds while fewer than half are spoiled.
struct RunNoise {
  double sigma = 0;
  std::size_t differences = 0;  // m; 0: no noise known
};
RunNoise run_noise(const std::vector<LevelPoint>& p, std::size_t begin, std::size_t end, std::size_t step = SIZE_MAX);

// The later points [split, end) against the earlier [begin, split) (begin < split < end), with the
// series' run-to-run noise.
struct LevelShift {
  Level before, after;
  Change change;  // after against before (noise.h): judged by verdict_of_change
  double z = 0;   // |log(after / before)| in units of the comparison's noise (q(m) is its 99.5% point)
};
LevelShift level_shift(const std::vector<LevelPoint>& p, std::size_t begin, std::size_t split, std::size_t end, Better dir,
                       const RunNoise& noise);

// The first index of each segment after the first, in order ([] when the points are one level), each
// step tested with run_noise of all of p but its own difference. dir known; every value > 0.
std::vector<std::size_t> level_steps(const std::vector<LevelPoint>& p, Better dir, double threshold);

// The level of [begin, end) as the baseline of one new point: its median and the band a new point of
// the same level lies in (its points' own bands, or the run-to-run band of one point against it, with
// the noise of [begin, end) itself).
Level reference_level(const std::vector<LevelPoint>& p, std::size_t begin, std::size_t end);

// The tables (simulated by TEST(LevelSteps, DISABLED_PrintTables); TEST(LevelSteps,
// TablesMatchASimulation) checks them): c(m), which makes c(m) x median |difference| an unbiased estimate
// of sigma, and q(m) at m differences (m >= 1).
double noise_scale_factor(std::size_t differences);
double step_critical_value(std::size_t differences);

}  // namespace gpuscale::history
