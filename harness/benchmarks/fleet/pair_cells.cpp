#include "harness/benchmarks/fleet/pair_cells.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace gpuscale {

std::vector<PairCells> place_records(const std::vector<double>& records, std::size_t matrices, std::size_t m,
                                     bool directed) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::vector<PairCells> out(matrices);
  for (auto& cells : out)
    for (auto& t : cells) t.assign(m * m, kNaN);
  const double total = static_cast<double>(matrices * m * m);
  for (std::size_t r = 0; r + kCellRecord <= records.size(); r += kCellRecord) {
    const double index = records[r];
    if (!(index >= 0 && index < total) || index != std::floor(index) || !std::isfinite(records[r + 1])) continue;
    const auto c = static_cast<std::size_t>(index);
    const std::size_t matrix = c / (m * m), i = c % (m * m) / m, j = c % m;
    auto& cells = out[matrix];
    for (auto cell : {i * m + j, j * m + i}) {
      if (std::isnan(cells[0][cell]))
        for (std::size_t t = 0; t < 3; ++t) cells[t][cell] = records[r + 1 + t];
      if (directed) break;
    }
  }
  return out;
}

PairCells slowest_rail(const std::vector<PairCells>& rails, std::vector<int>* rail_of) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  const std::size_t cells = rails.empty() ? 0 : rails.front()[0].size();
  PairCells out;
  for (auto& t : out) t.assign(cells, kNaN);
  if (rail_of) rail_of->assign(cells, -1);
  for (std::size_t r = 0; r < rails.size(); ++r) {
    for (const auto& t : rails[r])
      if (t.size() != cells) throw std::invalid_argument("slowest_rail: the rails' tables differ in size");
    for (std::size_t c = 0; c < cells; ++c) {
      const double v = rails[r][0][c];
      if (!std::isfinite(v) || (std::isfinite(out[0][c]) && !(v < out[0][c]))) continue;
      for (std::size_t t = 0; t < 3; ++t) out[t][c] = rails[r][t][c];
      if (rail_of) (*rail_of)[c] = static_cast<int>(r);
    }
  }
  return out;
}

}  // namespace gpuscale
