#include "harness/run/group_confirm.h"

#include <algorithm>
#include <cmath>

#include "core/stats.h"

namespace gpuscale {

std::vector<std::size_t> groups_to_confirm(const std::vector<double>& figures, double fraction, std::size_t cap) {
  std::vector<double> measured;
  for (double f : figures)
    if (std::isfinite(f) && f > 0) measured.push_back(f);
  if (measured.size() < 3) return {};
  const double floor = median_of(measured) * (1 - fraction / 2);
  std::vector<std::size_t> out;
  for (std::size_t g = 0; g < figures.size(); ++g)
    if (std::isfinite(figures[g]) && figures[g] > 0 && figures[g] < floor) out.push_back(g);
  std::stable_sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) { return figures[a] < figures[b]; });
  if (out.size() > cap) out.resize(cap);
  return out;
}

std::size_t confirm_cap(std::size_t groups) { return std::max<std::size_t>(2, groups / 8); }

}  // namespace gpuscale
