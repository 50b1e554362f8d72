#pragma once
// Node-pair and GPU-pair schedules for the fleet benchmarks (issue 14), and the rail groups inside a node
// pair (issue 24). Pure functions of counts, ranks (and a seed), unit-tested exhaustively without MPI.
#include <cstdint>
#include <vector>

namespace gpuscale {

struct NodePair {
  int a = 0, b = 0;  // node indices (Topology numbering), a < b
  bool operator==(const NodePair&) const = default;
};

// One round: pairs with no node in common, measured at the same time.
struct PairRound {
  std::vector<NodePair> pairs;  // in the circle's order (not sorted: 4096 nodes plan in well under a second)
  int bye = -1;                 // the node that sits this round out (odd node counts), else -1
};

// The round-robin tournament by the circle method: every unordered pair of the `nodes` nodes exactly
// once. Even N: N - 1 rounds of N / 2 pairs. Odd N: N rounds of (N - 1) / 2 pairs, each node has the
// bye in exactly one round. N = 1 (or less): no rounds. O(N^2) time and memory for the output.
std::vector<PairRound> round_robin(int nodes);

// --pairs-rounds M: the tournament over a seeded shuffle of the node order, then its first M rounds
// (all of them when M is at least the tournament's round count). The same (nodes, rounds, seed)
// always gives the same schedule, on every rank. rounds < 1 throws std::invalid_argument (the option
// parser refuses it first, see harness/options/run_option_values.h).
std::vector<PairRound> sampled_rounds(int nodes, int rounds, std::uint64_t seed);

// Rails inside a node pair (docs/fleet.md "Rails"): a rail-optimised fabric cables local rank i of every
// node (its GPU and the NIC nearest it) to the switch of rail i, so node A's traffic to node B on rail i
// runs from A's local rank i to B's local rank i. The `pairs` sendrecv measures every rail of a pair at
// once, one two-rank group per rail.
struct RailGroup {
  int rail = 0;     // the local rank index on both nodes
  int a = 0, b = 0;  // world ranks: local rank `rail` of node A, of node B
  bool operator==(const RailGroup&) const = default;
};
// The rail groups of nodes A and B from their world ranks in local order: rails 0 .. min(|A|, |B|) - 1.
// Rails beyond the smaller node have no counterpart and are not measured (their cells stay null).
std::vector<RailGroup> rail_groups(const std::vector<int>& ranks_a, const std::vector<int>& ranks_b);

// Intra-node GPU pairs, one pair at a time as nvbandwidth measures them (a peer copy or a sendrecv
// between src and dst while every other GPU of the node is quiet).
struct GpuPair {
  int src = 0, dst = 0;  // local GPU indices
  bool operator==(const GpuPair&) const = default;
};
// ordered: every (src, dst) with src != dst, src-major ((0,1), (0,2), ..., (1,0), ...): g (g - 1)
// steps, for one-way copies whose two directions may differ. unordered: src < dst, g (g - 1) / 2
// steps, for exchanges (sendrecv) that load both directions at once.
std::vector<GpuPair> gpu_pair_schedule(int gpus, bool ordered);

}  // namespace gpuscale
