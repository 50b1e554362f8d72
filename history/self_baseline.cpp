// Each member against its own past: the level-step rule per member series and its power (self_baseline.h).
#include "history/self_baseline.h"

#include <algorithm>
#include <cmath>

#include "history/level_steps.h"

namespace gpuscale::history {
namespace {

// Phi^-1(p) by bisection on erfc: p in (0, 1); the power needs it once per series.
double normal_quantile(double p) {
  double lo = -10, hi = 10;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// level_steps.cpp's variance of a level of k runs in units of one run's: a mean for k <= 2, a median above.
double level_variance(std::size_t k) { return k <= 2 ? 1.0 / static_cast<double>(k) : M_PI / (2.0 * static_cast<double>(k)); }

}  // namespace

double detectable_log_step(double sigma, std::size_t before, std::size_t after, std::size_t differences, double own_up,
                           double probability) {
  const double s = std::sqrt(level_variance(before) + level_variance(after));
  const double q = step_critical_value(differences);
  const double w = kNoiseEstimateVariance / static_cast<double>(differences);
  return q * s * sigma + std::log1p(own_up) + normal_quantile(probability) * s * sigma * std::sqrt(1 + q * q * w);
}

SelfPower self_power(const Series& s, const RegressionRules& rules, std::size_t within, double probability) {
  SelfPower p;
  p.within = within;
  p.probability = probability;
  std::vector<LevelPoint> pts;
  for (const auto& x : s.points)
    if (x.value > 0) pts.push_back({x.value, x.band});
  // The rule reads the window's run and at most N before it: the runs a next step would be judged with.
  const std::size_t keep = std::min(pts.size(), rules.lookback_runs + 1);
  pts.erase(pts.begin(), pts.end() - static_cast<std::ptrdiff_t>(keep));
  const RunNoise noise = run_noise(pts, 0, pts.size());
  if (pts.size() < 2 || noise.differences < 1) return p;
  // The later runs' own upper band: as wide as the widest of the series' recent runs (conservative).
  double own_up = 0;
  for (const auto& x : pts) own_up = std::max(own_up, x.band.up);
  p.sigma = noise.sigma;
  double best = INFINITY;
  for (std::size_t j = 1; j <= within; ++j) {
    // On run j after the step the rule reads N + 1 runs: the step's j and at most N + 1 - j before it.
    if (rules.lookback_runs + 1 <= j) break;
    const std::size_t before_all = std::min(pts.size(), rules.lookback_runs + 1 - j);
    const std::size_t before = std::min(before_all, rules.baseline_runs);
    const std::size_t differences = before_all + j - 2;  // all but the one across the step
    if (before < 2 || differences < 1) continue;
    const double d = detectable_log_step(noise.sigma, before, j, differences, own_up, probability);
    if (d < best) {
      best = d;
      p.runs = before;
    }
  }
  if (!std::isfinite(best)) return p;
  p.step = 1 - std::exp(-best);  // slower by this fraction
  p.known = true;
  return p;
}

std::vector<SelfVerdict> judge_own_past(const std::vector<Series>& series, const RegressionRules& rules,
                                        std::size_t within) {
  // One call over all the series: a regression points into the series it was given.
  const auto regs = find_regressions(series, rules);
  std::vector<SelfVerdict> out;
  for (const auto& s : series) {
    SelfVerdict v;
    v.series = &s;
    for (const auto& r : regs)
      if (r.series == &s) v.regression = r;  // the last: the newest level, the one that holds now
    v.power = self_power(s, rules, within);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace gpuscale::history
