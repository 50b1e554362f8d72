#include "harness/plan/tiling.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale {
namespace {

RankGroup make_group(const Topology& t, std::vector<int> ranks) {
  RankGroup g;
  std::sort(ranks.begin(), ranks.end());
  for (int r : ranks) g.nodes.push_back(t.node_of_rank[static_cast<std::size_t>(r)]);
  std::sort(g.nodes.begin(), g.nodes.end());
  g.nodes.erase(std::unique(g.nodes.begin(), g.nodes.end()), g.nodes.end());
  g.ranks = std::move(ranks);
  return g;
}

}  // namespace

Tiling tile(const Topology& t, int k, TilingMode mode) {
  const int n = static_cast<int>(t.packed_order.size());
  if (k < 1 || k > n) throw std::invalid_argument(fmt::format("tile: GPU count {} outside 1..{}", k, n));
  Tiling out;
  out.k = k;
  out.mode = mode;
  // The packed order lists each node's ranks contiguously, in local-rank order: cut it node by node.
  std::vector<std::vector<int>> node_ranks(static_cast<std::size_t>(t.nodes));
  for (int r : t.packed_order) node_ranks[static_cast<std::size_t>(t.node_of_rank[static_cast<std::size_t>(r)])].push_back(r);
  std::size_t largest = 0;
  for (const auto& v : node_ranks) largest = std::max(largest, v.size());
  std::vector<int> idle;
  if (mode == TilingMode::first) {  // today's plan, unchanged: the first k of the packed order
    out.groups.push_back(make_group(t, participants(t, k)));
    idle.assign(t.packed_order.begin() + k, t.packed_order.end());
    std::sort(idle.begin(), idle.end());
    out.idle = std::move(idle);
    return out;
  }
  const auto kk = static_cast<std::size_t>(k);
  auto cut = [&](const std::vector<int>& order) {
    std::size_t i = 0;
    for (; i + kk <= order.size(); i += kk)
      out.groups.push_back(make_group(t, std::vector<int>(order.begin() + static_cast<long>(i),
                                                          order.begin() + static_cast<long>(i + kk))));
    idle.insert(idle.end(), order.begin() + static_cast<long>(i), order.end());
  };
  if (kk <= largest)
    for (const auto& v : node_ranks) cut(v);
  else
    cut(t.packed_order);
  std::sort(idle.begin(), idle.end());
  out.idle = std::move(idle);
  return out;
}

Tiling tile(const std::vector<std::string>& hosts, const std::vector<int>& local_ranks, int k, TilingMode mode) {
  return tile(make_topology(hosts, local_ranks), k, mode);
}

std::vector<std::vector<int>> tiling_rounds(const Tiling& tiling) {
  std::vector<std::vector<int>> rounds;
  const int groups = static_cast<int>(tiling.groups.size());
  if (groups == 0) return rounds;
  switch (tiling.mode) {
    case TilingMode::concurrent: {
      rounds.emplace_back();
      for (int g = 0; g < groups; ++g) rounds.back().push_back(g);
      break;
    }
    case TilingMode::sequential:
      for (int g = 0; g < groups; ++g) rounds.push_back({g});
      break;
    case TilingMode::first: rounds.push_back({0}); break;
  }
  return rounds;
}

int group_of_rank(const Tiling& tiling, int rank) {
  for (std::size_t g = 0; g < tiling.groups.size(); ++g)
    if (std::binary_search(tiling.groups[g].ranks.begin(), tiling.groups[g].ranks.end(), rank)) return static_cast<int>(g);
  return -1;
}

std::vector<std::string> group_hosts(const RankGroup& group, const std::vector<std::string>& hosts) {
  std::vector<std::string> out;
  for (int r : group.ranks) {
    const auto& h = hosts.at(static_cast<std::size_t>(r));
    if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
  }
  return out;
}

}  // namespace gpuscale
