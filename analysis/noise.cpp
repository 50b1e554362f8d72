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
  // The ranks' own statistics when the file kept them, else the row's spread (written from them).
  auto s = spread_of_ranks(row.ranks);
  if (!s) s = row.spread;
  if (!s) return {};
  return {s->down, s->up};
}

}  // namespace gpuscale
