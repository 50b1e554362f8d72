#pragma once
// Each member against its own past (pure; tests/unit/history/test_self_baseline.cpp). docs/history.md,
// "Each member against its own past".
//
// A fleet's outlier rule (analysis/outliers.h) judges a GPU by its peers, so a GPU that was 3% above
// its peers and is now 2% below them is never named: manufacturing spread hides it. Here each member's
// own series (history/member_series.h) is judged by the level-step rule of `history regressions`
// (history/level_steps.h through find_regressions: robust steps beyond the series' own run-to-run
// noise), and the rule's power is stated from that same noise: "any GPU 4.1% slower than its last
// 30 runs is named within 3 runs (95%)".
//
// The power is analytic from the step test (level_steps.h): a level of b runs before the step against
// j runs after it is named when their log distance D + e exceeds q(m) x sigma_hat x s(b, j) plus the
// later runs' own upper band u, where s(b, j)^2 = se(b)^2 + se(j)^2 (level_steps.h's variances of a
// level), e ~ N(0, sigma^2 s^2) and sigma_hat = sigma (1 + w), w the relative error of the median-based
// noise estimate from m differences, Var(w) ~ kNoiseEstimateVariance / m (below). So
//   P(named on run j) = Phi((D - q s sigma - u) / (s sigma sqrt(1 + q^2 Var(w))))
// and the step named with probability p on run j is D_j = q s sigma + u + z_p s sigma sqrt(1 + q^2 Var(w)).
// Within k runs the rule has k chances; the stated step is the smallest D_j over j = 1..k, so a step of
// at least that size is named on that one run alone with probability p (the chances together only add).
// TEST(SelfBaseline, PowerMatchesASeededSimulation) checks it against the whole rule.
#include <cstddef>
#include <optional>

#include "history/trend.h"

namespace gpuscale::history {

// The relative variance of sigma's median-based estimate is about this / m: the median of m independent
// half-normal values gives 1 / (4 m f(med)^2) / med^2 = 1.36 / m, but consecutive differences share a
// run, and 200,000 Gaussian series per m (seed 1, 2026-12-07) gave 1.33, 1.48, 1.53, 1.60 / m at m = 10,
// 20, 30, 60: the 60's, so up to 60 differences the stated step errs large, on the safe side
// (TEST(SelfBaseline, NoiseEstimateVarianceIsBounded) checks it).
inline constexpr double kNoiseEstimateVariance = 1.6;

struct SelfPower {
  double step = 0;            // a fraction: any step down of at least this is named with `probability`...
  std::size_t within = 3;     // ...within this many runs of its start
  double probability = 0.95;
  std::size_t runs = 0;       // ...against this many runs before it (the series' last, up to K and N)
  double sigma = 0;           // the series' run-to-run noise (log units) the power comes from
  bool known = false;         // false: too few runs (a step needs 2 before it and 2 differences)
};

// The smallest log step named on the j-th run after it (after = j) with probability p, with b runs before
// it, the noise sigma estimated from m differences and the later runs' own upper band u (relative).
double detectable_log_step(double sigma, std::size_t before, std::size_t after, std::size_t differences, double own_up,
                           double probability);

// The power of the rule on series `s` for a step that starts at its next run: its noise from its last
// N + 1 runs (all their differences), the runs before such a step min(its runs, K, N + 1 - j) on
// run j, their differences one fewer than all then. `rules` as the member query judges by them.
SelfPower self_power(const Series& s, const RegressionRules& rules, std::size_t within = 3, double probability = 0.95);

// A member series judged: its regression at the window (the worse level that holds at its newest run,
// or, with --since, at a run of the window), and the power of the rule on it.
struct SelfVerdict {
  const Series* series = nullptr;
  std::optional<Regression> regression;
  SelfPower power;
};
std::vector<SelfVerdict> judge_own_past(const std::vector<Series>& series, const RegressionRules& rules,
                                        std::size_t within = 3);

}  // namespace gpuscale::history
