#include "analysis/noise.h"

#include "core/stats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

namespace gpuscale {

Better unit_direction(std::string_view unit) {
  static constexpr std::array<std::string_view, 7> higher{"GB/s", "TB/s", "MB/s", "TFLOP/s", "GFLOP/s", "samples/s",
                                                          "ops/s"};
  static constexpr std::array<std::string_view, 4> lower{"us", "ms", "s", "ns"};
  if (std::find(higher.begin(), higher.end(), unit) != higher.end()) return Better::higher;
  if (std::find(lower.begin(), lower.end(), unit) != lower.end()) return Better::lower;
  return Better::unknown;
}

NoiseBand noise_band(const ResultRow& row) {
  // The ranks' own statistics when the file kept them, else the row's spread (written from them).
  auto s = spread_of_ranks(row.ranks);
  if (!s) s = row.spread;
  if (!s) return {};
  return {std::max(s->down, 0.0), std::max(s->up, 0.0), s->reps};
}

double median_interval_confidence(std::size_t reps) { return median_bound_confidence(reps); }

Change change_of(Better dir, double a, double b, const NoiseBand& na, const NoiseBand& nb) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // The lowest and highest each median may be, relative to it.
  const double a_lo = std::max(1 - na.down, 0.0), a_hi = 1 + na.up;
  const double b_lo = std::max(1 - nb.down, 0.0), b_hi = 1 + nb.up;
  auto over = [&](double num, double den) { return den > 0 ? num / den : kInf; };
  Change c;
  c.noise_known = na.known() && nb.known();
  if (dir == Better::higher) {
    c.ratio = b / a;
    c.lo = c.ratio * b_lo / a_hi;
    c.hi = c.ratio * over(b_hi, a_lo);
  } else {
    c.ratio = a / b;
    c.lo = c.ratio * a_lo / b_hi;
    c.hi = c.ratio * over(a_hi, b_lo);
  }
  if (!c.noise_known) c.lo = c.hi = c.ratio;
  return c;
}

}  // namespace gpuscale
