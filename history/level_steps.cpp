// Steps in a series' level: binary segmentation with a robust level-shift test (level_steps.h).
#include "history/level_steps.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "analysis/compare.h"

namespace gpuscale::history {
namespace {

// c(m) and q(m) for m = 1..30 differences, printed by tests/tools/level_step_tables.cpp from
// 2,000,000 Gaussian series each (seed 20240601): c(m) = 1 / E[median of m |differences|] at sigma 1;
// q(m) the 99.5% point of level_shift's z for m + 1 points against one more, the noise from their m
// differences. TEST(LevelSteps, TablesMatchASimulation) checks them. Beyond 30 each tends to its limit
// in 1/m (as Student's t tends to the normal).
constexpr std::array<double, 31> kScale = {0,
                                           0.8867, 0.8859, 0.9192, 0.9334, 0.9660, 0.9704, 0.9841, 0.9871, 0.9969, 0.9982,
                                           1.0045, 1.0062, 1.0108, 1.0117, 1.0152, 1.0159, 1.0190, 1.0194, 1.0216, 1.0222,
                                           1.0241, 1.0249, 1.0263, 1.0267, 1.0282, 1.0281, 1.0295, 1.0294, 1.0305, 1.0304};
constexpr std::array<double, 31> kCritical = {0,
                                              100.026, 12.782, 13.775, 8.128, 7.772, 6.233, 5.956, 5.337, 5.091, 4.777,
                                              4.600, 4.413, 4.260, 4.203, 4.068, 4.007, 3.898, 3.868, 3.770, 3.760,
                                              3.672, 3.664, 3.588, 3.593, 3.520, 3.526, 3.476, 3.471, 3.417, 3.425};
constexpr double kScaleLimit = 1.0483;     // 1 / (sqrt(2) x Phi^-1(3/4)): |difference| of two N(0, 1)
constexpr double kCriticalLimit = 2.807;   // Phi^-1(1 - kStepAlpha / 2)

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The level of sorted log values: the median; of an even count, the middle value nearer `other` (the
// other side's median), so that the shift between the sides is never overstated.
double level_of(const std::vector<double>& sorted, double other) {
  const std::size_t n = sorted.size();
  if (n % 2) return sorted[n / 2];
  const double lo = sorted[n / 2 - 1], hi = sorted[n / 2];
  return std::abs(lo - other) <= std::abs(hi - other) ? lo : hi;
}

std::vector<double> sorted_logs(const std::vector<LevelPoint>& p, std::size_t begin, std::size_t end) {
  std::vector<double> v;
  for (std::size_t i = begin; i < end; ++i) v.push_back(std::log(p[i].value));
  std::sort(v.begin(), v.end());
  return v;
}

// The widest own band of the points (the fewest repetitions behind it).
NoiseBand own_band(const std::vector<LevelPoint>& p, std::size_t begin, std::size_t end) {
  NoiseBand b;
  b.reps = SIZE_MAX;
  for (std::size_t i = begin; i < end; ++i) {
    b.down = std::max(b.down, p[i].band.down);
    b.up = std::max(b.up, p[i].band.up);
    b.reps = std::min(b.reps, p[i].band.reps);
  }
  if (begin == end) b.reps = 0;
  return b;
}

// The absolute log differences between consecutive points of [begin, end), but for the one from
// point skip - 1 to point skip.
void add_differences(const std::vector<LevelPoint>& p, std::size_t begin, std::size_t end, std::size_t skip,
                     std::vector<double>& out) {
  for (std::size_t i = begin + 1; i < end; ++i)
    if (i != skip) out.push_back(std::abs(std::log(p[i].value) - std::log(p[i - 1].value)));
}

// The variance of a level of k points in units of one point's (k <= 2: a mean; above: a median).
double level_variance(std::size_t k) { return k <= 2 ? 1.0 / static_cast<double>(k) : M_PI / (2.0 * static_cast<double>(k)); }

// The run-to-run band on `b` for a comparison of levels of nx and ny points: +- h in log units.
void widen(NoiseBand& b, double h) {
  b.down = std::max(b.down, 1 - std::exp(-h));
  b.up = std::max(b.up, std::exp(h) - 1);
}

// The E-divisive energy statistic (alpha = 1) of every split of [begin, end) over the log values y,
// each in O(n) from the last: q[s - begin] for the split at s. A side of one point has no inner pairs.
std::vector<double> energy(const std::vector<double>& y, std::size_t begin, std::size_t end) {
  const std::size_t n = end - begin;
  std::vector<double> q(n, 0);
  double within_x = 0, within_y = 0, cross = 0;
  for (std::size_t i = begin; i < end; ++i)
    for (std::size_t j = i + 1; j < end; ++j) within_y += std::abs(y[i] - y[j]);
  for (std::size_t s = begin + 1; s < end; ++s) {
    // Point s - 1 moves from the later side to the earlier one.
    const std::size_t k = s - 1;
    double to_x = 0, to_y = 0;
    for (std::size_t i = begin; i < k; ++i) to_x += std::abs(y[i] - y[k]);
    for (std::size_t j = s; j < end; ++j) to_y += std::abs(y[k] - y[j]);
    within_x += to_x;
    within_y -= to_y;
    cross += to_y - to_x;
    const double nx = static_cast<double>(s - begin), ny = static_cast<double>(end - s);
    const double e = 2 * cross / (nx * ny) - (nx > 1 ? within_x / (nx * (nx - 1) / 2) : 0) -
                     (ny > 1 ? within_y / (ny * (ny - 1) / 2) : 0);
    q[s - begin] = nx * ny / (nx + ny) * e;
  }
  return q;
}

// Two passes, so that a level between two others (a dip that recovered) is found as well as a step:
// the energy's best split of each part places the candidate steps, down to parts of 2-3 points (the
// newest point alone is always a candidate); then the least sure candidate is merged away, again and
// again, until each one left is a step between the segments on either side of it. A median alone
// would not split "100 100 40 40 100 100" at its first candidate: each side's median is 100.
struct Segmenter {
  const std::vector<LevelPoint>& p;
  Better dir;
  double threshold;
  std::vector<double> y;
  std::vector<std::size_t> steps;

  // [begin, end); `newest`: it ends with the series' latest point, so its last point may stand alone.
  void candidates(std::size_t begin, std::size_t end, bool newest) {
    const std::size_t last = newest ? end - 1 : end - 2;  // the latest split allowed
    if (end - begin < 3 || begin + 2 > last) return;
    const auto q = energy(y, begin, end);
    std::size_t best = begin + 2;
    for (std::size_t s = begin + 2; s <= last; ++s)
      if (q[s - begin] > q[best - begin]) best = s;
    candidates(begin, best, false);
    steps.push_back(best);
    candidates(best, end, newest);
  }

  // How sure the step at `split` between [begin, split) and [split, end) is: > 0 when its interval
  // lies wholly beyond the threshold either way (the log distance to it), <= 0 when it does not.
  double margin(std::size_t begin, std::size_t split, std::size_t end) const {
    const Change c = level_shift(p, begin, split, end, dir, run_noise(p, 0, p.size(), split)).change;
    const Verdict v = verdict_of_change(c, threshold);  // compare's rule says whether it is a step
    if (!c.noise_known) return -std::numeric_limits<double>::infinity();
    // How far the interval lies beyond the threshold (or how far it falls short), in log units.
    const double far = std::max(std::log(1 - threshold) - std::log(c.hi), std::log(c.lo) - std::log(1 + threshold));
    return v == Verdict::regression || v == Verdict::improvement ? std::max(far, 1e-300) : std::min(far, 0.0);
  }

  void prune() {
    const std::size_t n = p.size();
    while (!steps.empty()) {
      std::vector<double> m;
      for (std::size_t j = 0; j < steps.size(); ++j)
        m.push_back(margin(j == 0 ? 0 : steps[j - 1], steps[j], j + 1 == steps.size() ? n : steps[j + 1]));
      std::size_t weakest = static_cast<std::size_t>(std::min_element(m.begin(), m.end()) - m.begin());
      // Only the newest segment may be one point: when the newest point alone made the one before it a
      // point too, the less sure of that point's two boundaries goes first.
      const std::size_t k = steps.size();
      if (k >= 2 && steps[k - 1] == n - 1 && steps[k - 2] == n - 2) weakest = m[k - 2] < m[k - 1] ? k - 2 : k - 1;
      else if (m[weakest] > 0) return;
      steps.erase(steps.begin() + static_cast<std::ptrdiff_t>(weakest));
    }
  }
};

}  // namespace

namespace {
// Beyond the table: from its last value towards the limit, in 1/m.
double tail_of(const std::array<double, 31>& table, double limit, std::size_t m) {
  if (m < table.size()) return table[m];
  return limit + (table.back() - limit) * static_cast<double>(table.size() - 1) / static_cast<double>(m);
}
}  // namespace

double noise_scale_factor(std::size_t m) { return tail_of(kScale, kScaleLimit, m); }
double step_critical_value(std::size_t m) { return tail_of(kCritical, kCriticalLimit, m); }

RunNoise run_noise(const std::vector<LevelPoint>& p, std::size_t begin, std::size_t end, std::size_t step) {
  std::vector<double> diffs;
  add_differences(p, begin, end, step, diffs);
  if (diffs.empty()) return {};
  return {noise_scale_factor(diffs.size()) * median_of(diffs), diffs.size()};
}

LevelShift level_shift(const std::vector<LevelPoint>& p, std::size_t begin, std::size_t split, std::size_t end, Better dir,
                       const RunNoise& noise) {
  LevelShift r;
  const auto x = sorted_logs(p, begin, split), y = sorted_logs(p, split, end);
  const double lx = level_of(x, median_of(y)), ly = level_of(y, median_of(x));
  r.before = {std::exp(lx), own_band(p, begin, split), split - begin};
  r.after = {std::exp(ly), own_band(p, split, end), end - split};
  if (noise.differences == 0) {
    r.before.band.reps = 0;  // no run-to-run noise known: nothing is judged
  } else {
    const double spread = noise.sigma * std::sqrt(level_variance(x.size()) + level_variance(y.size()));
    widen(r.before.band, step_critical_value(noise.differences) * spread);
    r.z = spread > 0 ? std::abs(ly - lx) / spread : (ly == lx ? 0 : std::numeric_limits<double>::infinity());
  }
  r.change = change_of(dir, r.before.median, r.after.median, r.before.band, r.after.band);
  return r;
}

std::vector<std::size_t> level_steps(const std::vector<LevelPoint>& p, Better dir, double threshold) {
  if (p.size() < 3) return {};  // a step needs 2 points before it
  Segmenter s{p, dir, threshold, {}, {}};
  for (const auto& q : p) s.y.push_back(std::log(q.value));
  s.candidates(0, p.size(), true);
  // The newest point alone: weighed little in the energy (one point against many), so the day a step
  // happens is judged that day.
  if (std::find(s.steps.begin(), s.steps.end(), p.size() - 1) == s.steps.end()) s.steps.push_back(p.size() - 1);
  s.prune();
  return s.steps;
}

Level reference_level(const std::vector<LevelPoint>& p, std::size_t begin, std::size_t end) {
  const auto x = sorted_logs(p, begin, end);
  Level l{std::exp(median_of(x)), own_band(p, begin, end), end - begin};
  if (const RunNoise n = run_noise(p, begin, end); n.differences > 0)
    widen(l.band, step_critical_value(n.differences) * n.sigma * std::sqrt(level_variance(x.size()) + 1));
  return l;
}

}  // namespace gpuscale::history
