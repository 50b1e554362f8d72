#include "harness/pair_confirm.h"

#include <cmath>

#include "analysis/outliers.h"

namespace gpuscale {

PairCells best_cells(const PairCells& first, const PairCells& second) {
  auto out = first;
  for (std::size_t c = 0; c < first[0].size(); ++c)
    if (std::isfinite(second[0][c]) && !(first[0][c] >= second[0][c]))
      for (std::size_t t = 0; t < 3; ++t) out[t][c] = second[t][c];
  return out;
}

bool pass_has_suspects(const PairCells& cells, const std::vector<std::string>& hosts,
                       const std::vector<std::vector<int>>& ranks, double fraction) {
  const std::size_t m = hosts.size();
  PairMatrix matrix;
  matrix.hosts = hosts;
  matrix.ranks = ranks;
  for (std::size_t t = 0; t < 3; ++t) {
    auto& rows = t == 0 ? matrix.values : t == 1 ? matrix.spread_down : matrix.spread_up;
    rows.assign(m, std::vector<double>(m));
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < m; ++j) rows[i][j] = cells[t][i * m + j];
  }
  OutlierRule rule;
  rule.fraction = fraction;
  return !matrix_outliers(matrix, OutlierKind::node, rule).empty();
}

}  // namespace gpuscale
