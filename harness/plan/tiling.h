#pragma once
// Tiled GPU counts (issue 14): at GPU count k the ranks are cut into disjoint groups of k that all
// measure, instead of only the first k. Pure functions of where the ranks run (harness/plan/plan.h's
// Topology), so every launch shape is unit-tested without MPI.
//
// The rule, for nodes of g_n ranks each (g_max the largest):
// - k <= g_max: groups stay inside one node. Each node's ranks, in local-rank order, are cut into
//   floor(g_n / k) groups of k; the g_n mod k ranks left on a node are idle at this count.
// - k >  g_max: groups are consecutive runs of k ranks of the packed order (node by node, then local
//   rank), so with equal nodes whose size divides k every group is k / g whole nodes. floor(N / k)
//   groups; the last N mod k ranks are idle.
// Leftover ranks are named idle, not measured as a smaller group: a smaller group's figure belongs to
// another GPU count (it would bias the row's median and make a false outlier), and at intra-node counts
// the leftovers sit on different nodes, so a group of them would be an inter-node figure in an
// intra-node row. Every idle rank is measured in a full group at a smaller count (k = 1 tiles every rank).
// Mode `first` is exactly today's behaviour: one group, participants(t, k). With equal-sized nodes the
// tiled modes' group 0 is that same group.
#include <string>
#include <string_view>
#include <vector>

#include "harness/options/run_modes.h"  // TilingMode, its names
#include "harness/plan/plan.h"

namespace gpuscale {

struct RankGroup {
  std::vector<int> ranks;  // world ranks, ascending
  std::vector<int> nodes;  // Topology node indices the ranks run on, ascending
};

struct Tiling {
  int k = 0;
  TilingMode mode = TilingMode::concurrent;
  std::vector<RankGroup> groups;  // groups of exactly k ranks, in node (packed) order
  std::vector<int> idle;          // world ranks that measure nothing at this count, ascending
};

// The groups at GPU count k (1 <= k <= number of ranks, else std::invalid_argument). Mode `first`
// gives the one group participants(t, k) and names every other rank idle; concurrent and sequential
// tile by the rule above and differ only in tiling_rounds.
Tiling tile(const Topology& t, int k, TilingMode mode);
// The same from the world's hosts and local ranks (one entry per rank, rank order).
Tiling tile(const std::vector<std::string>& hosts, const std::vector<int>& local_ranks, int k, TilingMode mode);

// When each group measures: a list of rounds, each a list of indices into tiling.groups; the rounds run
// one after another, the groups of a round at once. concurrent: one round of every group; sequential:
// one round per group, in group order; first: one round of group 0.
std::vector<std::vector<int>> tiling_rounds(const Tiling& tiling);

// The index of the group rank r belongs to, or -1 when r is idle (an MPI_Comm_split colour).
int group_of_rank(const Tiling& tiling, int rank);

// The distinct hosts of a group's ranks, in rank order.
std::vector<std::string> group_hosts(const RankGroup& group, const std::vector<std::string>& hosts);

}  // namespace gpuscale
