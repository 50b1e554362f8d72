#pragma once
// The confirming pass of the node-pair matrix (docs/fleet.md "Outliers"): a suspect in the first pass
// is measured again before it is named. Pure decisions on the matrix's cells, unit-tested without MPI;
// harness/benchmarks/fleet_pairs.cpp measures the passes.
#include <array>
#include <string>
#include <vector>

namespace gpuscale {

// An M x M pair matrix, row-major: value, spread below, spread above (NaN where not measured).
using PairCells = std::array<std::vector<double>, 3>;

// Each cell from the pass where it measured higher, its spreads with it (best of two, as STREAM
// reports its best time); NaN only where neither pass measured it.
PairCells best_cells(const PairCells& first, const PairCells& second);

// Whether the node-pair matrix of nodes `hosts` (their ranks `ranks`) names any node or link under the
// outlier rule at `fraction` (analysis/outliers.h, as the run's own analysis applies it).
bool pass_has_suspects(const PairCells& cells, const std::vector<std::string>& hosts,
                       const std::vector<std::vector<int>>& ranks, double fraction);

}  // namespace gpuscale
