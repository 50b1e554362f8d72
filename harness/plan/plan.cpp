#include "harness/plan/plan.h"

#include <algorithm>
#include <map>
#include <set>

namespace gpuscale {

Topology make_topology(const std::vector<std::string>& hosts, const std::vector<int>& local_ranks) {
  Topology t;
  std::map<std::string, int> index;
  for (const auto& h : hosts) {
    auto [it, inserted] = index.emplace(h, static_cast<int>(index.size()));
    t.node_of_rank.push_back(it->second);
  }
  t.nodes = std::max<int>(1, static_cast<int>(index.size()));
  t.packed_order.resize(hosts.size());
  for (std::size_t r = 0; r < hosts.size(); ++r) t.packed_order[r] = static_cast<int>(r);
  std::stable_sort(t.packed_order.begin(), t.packed_order.end(), [&](int a, int b) {
    const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
    if (t.node_of_rank[ua] != t.node_of_rank[ub]) return t.node_of_rank[ua] < t.node_of_rank[ub];
    return local_ranks[ua] < local_ranks[ub];
  });
  return t;
}

std::vector<int> gpu_counts(int n) {
  std::vector<int> out;
  for (int k = 1; k <= n; k *= 2) {
    out.push_back(k);
    if (k > n / 2) break;  // the next doubling would overflow past n
  }
  if (out.empty() || out.back() != n) out.push_back(n);
  return out;
}

std::vector<int> participants(const Topology& t, int k) {
  std::vector<int> out(t.packed_order.begin(), t.packed_order.begin() + std::min<std::size_t>(
                                                                          static_cast<std::size_t>(std::max(k, 0)),
                                                                          t.packed_order.size()));
  std::sort(out.begin(), out.end());
  return out;
}

int nodes_spanned(const Topology& t, int k) {
  std::set<int> nodes;
  for (int r : participants(t, k)) nodes.insert(t.node_of_rank[static_cast<std::size_t>(r)]);
  return static_cast<int>(nodes.size());
}

std::string topology_label(const Topology& t, int k) {
  if (k <= 1) return "single";
  return nodes_spanned(t, k) > 1 ? "inter-node" : "intra-node";
}

std::optional<std::size_t> last_communicator_point(const std::vector<bool>& collective, const std::vector<bool>& kept) {
  std::optional<std::size_t> last;
  for (std::size_t i = 0; i < collective.size(); ++i)
    if (collective[i] && !(i < kept.size() && kept[i])) last = i;
  return last;
}

namespace {

bool needs_at(const std::vector<std::vector<bool>>& needs, std::size_t p, std::size_t c) {
  return c < needs[p].size() && needs[p][c];
}

}  // namespace

std::vector<std::optional<std::size_t>> last_communicator_rows(const std::vector<std::vector<bool>>& needs,
                                                               std::size_t counts) {
  std::vector<std::optional<std::size_t>> last(counts);
  for (std::size_t p = 0; p < needs.size(); ++p)
    for (std::size_t c = 0; c < counts; ++c)
      if (needs_at(needs, p, c)) last[c] = p;
  return last;
}

std::vector<int> count_communicators_alive(const std::vector<std::vector<bool>>& needs, std::size_t counts) {
  const auto last = last_communicator_rows(needs, counts);
  std::vector<std::optional<std::size_t>> first(counts);
  for (std::size_t p = needs.size(); p-- > 0;)
    for (std::size_t c = 0; c < counts; ++c)
      if (needs_at(needs, p, c)) first[c] = p;
  std::vector<int> alive(needs.size(), 0);
  for (std::size_t p = 0; p < needs.size(); ++p)
    for (std::size_t c = 0; c < counts; ++c)
      if (first[c] && *first[c] <= p && p <= *last[c]) ++alive[p];
  return alive;
}

}  // namespace gpuscale
