#pragma once
// The passes of the node-pair benchmark (`pairs`, fleet_pairs.cpp) on one rank, by job: which pair and
// rail of a round is this rank's, one pass over a schedule's rounds, the confirming passes over the
// suspects, and the matrices as the result file holds them. Every function that measures is
// collective over the point's group: each member calls it, in the same order.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/benchmark.h"
#include "harness/benchmarks/fleet/fleet_measure.h"
#include "harness/benchmarks/fleet/pair_cells.h"
#include "harness/benchmarks/fleet/pair_schedule.h"

namespace gpuscale::fleet {

class NodePairPasses {
 public:
  // `inner`: the collective every pair runs, with its `params`; `by_rail`: the sendrecv, one two-rank
  // group per rail (local rank i of both nodes), or else one group of both nodes' ranks (all_reduce).
  // Each pair's failure and figures go to `out`, this rank's measurement.
  NodePairPasses(const Benchmark& inner, const nlohmann::json& params, const Placement& where, bool by_rail,
                 RunContext& ctx, RankMeasurement& out);

  std::size_t rails() const { return rails_; }        // the most GPUs on one node
  std::size_t matrices() const { return matrices_; }  // a matrix per rail, or the one node-pair matrix

  // One pass: every pair of `rounds` once (its rails at once, or in turns under --tiling sequential),
  // the cells gathered: identical on every rank.
  std::vector<PairCells> pass(const std::vector<PairRound>& rounds);

  // A suspect is confirmed before it is named: the passes after the first, where it shows one. Each
  // cell keeps its best pass. Returns the passes measured (1, 2 or 3).
  int confirm(std::vector<PairCells>& cells, const std::vector<PairRound>& schedule);

  // The node-pair matrix: each pair's slowest rail, or the one matrix of the all_reduce.
  PairCells node_cells(const std::vector<PairCells>& cells) const;
  // Each node's rank on rail `rail` (none where the node has fewer GPUs).
  std::vector<std::vector<int>> rail_ranks(std::size_t rail) const;

  // The row's matrices: the node-pair matrix, then each rail's with its unmeasured nodes said.
  nlohmann::json matrices_json(const std::vector<PairCells>& cells) const;

 private:
  // This rank's place in a round: the pair it is in (-1: none), its nodes, its rail, and the colour
  // of its two-rank (or two-node) group.
  struct Seat {
    int colour = -1, pair = -1;
    std::size_t a = 0, b = 0, matrix = 0;
  };
  Seat seat_in(const PairRound& round) const;
  bool suspects_in(const std::vector<PairCells>& cells) const;
  std::vector<NodePair> suspects_of(const std::vector<PairCells>& cells) const;

  const Benchmark& inner_;
  const nlohmann::json& params_;
  const Placement& where_;
  RunContext& ctx_;
  RankMeasurement& out_;
  bool by_rail_;
  std::size_t m_;  // the nodes
  int me_;         // this rank's world rank
  std::size_t my_node_;
  std::size_t rails_ = 0, matrices_ = 1;
  std::size_t rail_turns_ = 1;  // turns a pair's rails take (1: all at once)
  bool in_turns_ = false;
};

}  // namespace gpuscale::fleet
