#pragma once
// The confirming pass of the node-pair matrices (docs/fleet.md "Outliers"): a suspect in the first pass,
// in the node-pair matrix or in any rail's, is measured again before it is named. Pure decisions on the
// matrices' cells, unit-tested without MPI; harness/benchmarks/fleet_pairs.cpp measures the passes.
#include <string>
#include <vector>

#include "harness/pair_cells.h"

namespace gpuscale {

// Each cell from the pass where it measured higher, its spreads with it (best of two, as STREAM
// reports its best time); NaN only where neither pass measured it.
PairCells best_cells(const PairCells& first, const PairCells& second);

// Whether a pair matrix of nodes `hosts` (their ranks `ranks`: all of a node's for the node-pair matrix,
// its rank on the rail for a rail's) names any node or link under the outlier rule at `fraction`
// (analysis/outliers.h, as the run's own analysis applies it).
bool pass_has_suspects(const PairCells& cells, const std::vector<std::string>& hosts,
                       const std::vector<std::vector<int>>& ranks, double fraction);

}  // namespace gpuscale
