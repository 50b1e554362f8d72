#include "harness/benchmarks/fleet/pair_confirm.h"

#include <algorithm>
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

namespace {

PairMatrix pair_matrix(const PairCells& cells, const std::vector<std::string>& hosts,
                       const std::vector<std::vector<int>>& ranks) {
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
  return matrix;
}

std::vector<Outlier> suspects(const PairCells& cells, const std::vector<std::string>& hosts,
                              const std::vector<std::vector<int>>& ranks, const OutlierRule& rule) {
  return matrix_outliers(pair_matrix(cells, hosts, ranks), OutlierKind::node, rule);
}

}  // namespace

bool pass_has_suspects(const PairCells& cells, const std::vector<std::string>& hosts,
                       const std::vector<std::vector<int>>& ranks, const OutlierRule& rule) {
  return !suspects(cells, hosts, ranks, rule).empty();
}

std::vector<NodePair> suspect_pairs(const PairCells& cells, const std::vector<std::string>& hosts,
                                    const std::vector<std::vector<int>>& ranks, const OutlierRule& rule) {
  const std::size_t m = hosts.size();
  // A record names its members by host (node matrices: one host a member).
  const auto member = [&](const std::string& host) {
    return static_cast<std::size_t>(std::find(hosts.begin(), hosts.end(), host) - hosts.begin());
  };
  std::vector<NodePair> out;
  const auto add = [&](std::size_t i, std::size_t j) {
    if (i >= m || j >= m || i == j || !std::isfinite(cells[0][i * m + j])) return;
    out.push_back({static_cast<int>(std::min(i, j)), static_cast<int>(std::max(i, j))});
  };
  for (const auto& o : suspects(cells, hosts, ranks, rule)) {
    if (o.kind == OutlierKind::pair && o.hosts.size() == 2) {
      add(member(o.hosts[0]), member(o.hosts[1]));
    } else if (!o.hosts.empty()) {
      const std::size_t i = member(o.hosts[0]);
      for (std::size_t j = 0; j < m; ++j) add(i, j);
    }
  }
  return unique_pairs(std::move(out));
}

std::vector<NodePair> unique_pairs(std::vector<NodePair> pairs) {
  std::sort(pairs.begin(), pairs.end(), [](const NodePair& x, const NodePair& y) { return x.a != y.a ? x.a < y.a : x.b < y.b; });
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

std::vector<NodePair> third_pass_pairs(std::vector<NodePair> suspects, std::size_t rounds) {
  suspects = unique_pairs(std::move(suspects));
  if (suspects.size() > 2 * rounds) suspects.clear();
  return suspects;
}

std::vector<PairRound> rounds_of(const std::vector<NodePair>& pairs) {
  std::vector<PairRound> out;
  for (const auto& p : pairs) out.push_back({{p}, -1});
  return out;
}

}  // namespace gpuscale
