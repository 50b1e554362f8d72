#include "analysis/noise.h"

#include <algorithm>
#include <array>
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
  NoiseBand b;
  for (const auto& r : row.ranks) {
    const auto& s = r.stats;
    if (!r.value || s.n == 0 || !(s.median > 0)) continue;
    b.down = std::max(b.down, (s.median - s.min) / s.median);
    b.up = std::max(b.up, (s.max - s.median) / s.median);
  }
  return b;
}

}  // namespace gpuscale
