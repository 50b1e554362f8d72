#pragma once
// The confirming pass of the node-pair matrices (docs/fleet.md "Outliers"): a suspect in the first pass,
// in the node-pair matrix or in any rail's, is measured again before it is named. Pure decisions on the
// matrices' cells, unit-tested without MPI; harness/benchmarks/fleet/node_pair_passes.cpp measures the passes.
#include <string>
#include <vector>

#include "analysis/outliers.h"
#include "harness/benchmarks/fleet/pair_cells.h"
#include "harness/benchmarks/fleet/pair_schedule.h"

namespace gpuscale {

// Each cell from the pass where it measured higher, its spreads with it (best of two, as STREAM
// reports its best time); NaN only where neither pass measured it.
PairCells best_cells(const PairCells& first, const PairCells& second);

// Whether a pair matrix of nodes `hosts` (their ranks `ranks`: all of a node's for the node-pair matrix,
// its rank on the rail for a rail's) names any node or link under the outlier rule `rule`
// (analysis/outliers.h, as the run's own analysis applies it).
bool pass_has_suspects(const PairCells& cells, const std::vector<std::string>& hosts,
                       const std::vector<std::vector<int>>& ranks, const OutlierRule& rule);

// The node pairs behind the suspects of such a matrix (a < b, sorted, no repeats): a suspect link's
// pair, and every measured pair of a suspect node. Measured once more after the confirming pass, alone
// (node_pair_passes.cpp), they make a third pass of their own: a cell that a busy neighbour happened to
// slow in both full passes is rarely slow a third time, where a sick node, NIC or link always is.
std::vector<NodePair> suspect_pairs(const PairCells& cells, const std::vector<std::string>& hosts,
                                    const std::vector<std::vector<int>>& ranks, const OutlierRule& rule);

// Sorted (by a, then b), without repeats.
std::vector<NodePair> unique_pairs(std::vector<NodePair> pairs);

// The pairs of the third pass: the suspects' pairs of every matrix (suspect_pairs, merged), or none
// where they are more than twice the schedule's `rounds` (more than two odd nodes' pairs is not an odd
// node, and the pass stays within the budget of two more passes).
std::vector<NodePair> third_pass_pairs(std::vector<NodePair> suspects, std::size_t rounds);

// Each pair as a round of its own (measured alone, in the order given).
std::vector<PairRound> rounds_of(const std::vector<NodePair>& pairs);

}  // namespace gpuscale
