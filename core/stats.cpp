#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <nlohmann/json.hpp>

namespace gpuscale {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  // Halves first: the midpoint of two finite values is finite (DBL_MAX and DBL_MAX included).
  return n % 2 ? v[n / 2] : 0.5 * v[n / 2 - 1] + 0.5 * v[n / 2];
}

namespace {

// P(Binomial(n, 1/2) < k), summed in doubles (n is a repetition count: the terms stay finite up to
// n ~ 1000, and the result is clamped to [0, 1]).
double below_probability(std::size_t n, std::size_t k) {
  double term = std::ldexp(1.0, -static_cast<int>(std::min<std::size_t>(n, 1000)));  // C(n, 0) / 2^n
  double sum = 0;
  for (std::size_t i = 0; i < k && i <= n; ++i) {
    sum += term;
    term *= static_cast<double>(n - i) / static_cast<double>(i + 1);
  }
  return std::min(sum, 1.0);
}

double bound_confidence(std::size_t n, std::size_t k) { return std::max(0.0, 1 - 2 * below_probability(n, k)); }

}  // namespace

std::size_t median_bound_order(std::size_t n) {
  constexpr double kConfidence = 0.95;
  std::size_t k = 1;
  // At most 1000 repetitions are weighed (a longer run's interval only gets tighter than this).
  while (k + 1 <= (std::min<std::size_t>(n, 1000) + 1) / 2 && bound_confidence(n, k + 1) >= kConfidence) ++k;
  return k;
}

double median_bound_confidence(std::size_t n) {
  if (n < 2) return 0;
  return bound_confidence(std::min<std::size_t>(n, 1000), median_bound_order(n));
}

RepStats compute_stats(std::vector<double> v) {
  RepStats s;
  s.n = v.size();
  if (v.empty()) return s;
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  s.min = *lo;
  s.max = *hi;
  // Values beyond 1e150 (a file may hold values near DBL_MAX) are scaled by the largest magnitude, so
  // neither the sum nor the squares overflow: the statistics of finite values stay finite. Below it the
  // plain sums cannot overflow and keep their exact rounding.
  const double scale = std::max(std::fabs(s.min), std::fabs(s.max));
  const double unit = std::isfinite(scale) && scale > 1e150 ? scale : 1.0;
  const double n = static_cast<double>(s.n);
  double mean = 0;
  if (unit == 1.0) {
    mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
  } else {
    for (double x : v) mean += (x / unit) / n;
  }
  double ss = 0;
  for (double x : v) ss += (x / unit - mean) * (x / unit - mean);
  s.mean = mean * unit;
  s.stddev = s.n > 1 ? std::sqrt(ss / (n - 1)) * unit : 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t k = median_bound_order(s.n);
  s.lo = v[k - 1];
  s.hi = v[s.n - k];
  s.median = median_of(std::move(v));
  return s;
}

void to_json(nlohmann::json& j, const RepStats& s) {
  j = {{"n", s.n}, {"median", s.median}, {"min", s.min}, {"max", s.max}, {"mean", s.mean}, {"stddev", s.stddev}};
}

void from_json(const nlohmann::json& j, RepStats& s) {
  j.at("n").get_to(s.n);
  j.at("median").get_to(s.median);
  j.at("min").get_to(s.min);
  j.at("max").get_to(s.max);
  j.at("mean").get_to(s.mean);
  j.at("stddev").get_to(s.stddev);
  // Files written before the bounds were kept: min and max (wider, so no less safe).
  s.lo = j.contains("lo") ? j.at("lo").get<double>() : s.min;
  s.hi = j.contains("hi") ? j.at("hi").get<double>() : s.max;
}

}  // namespace gpuscale
