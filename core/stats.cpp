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
}

}  // namespace gpuscale
