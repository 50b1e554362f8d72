#pragma once
// A tiled GPU count's row (docs/fleet.md): every group of the count is built into its own row
// (harness/rows/row_builder.h), and the count's row is the median group's, with every group kept beside
// it. Pure logic, unit-tested without MPI.
#include <vector>

#include "harness/plan/tiling.h"
#include "results/result_file.h"

namespace gpuscale {

struct GroupRow {
  RowGroup group;  // hosts and ranks (value, status and spreads are filled from `row`)
  ResultRow row;   // build_row of the group's ranks alone
};

// The count's row:
// - its value (aggregate), efficiency and fraction of the peak are the median group's: of the groups
//   whose measurement is ok, ordered by value, the one at index (n - 1) / 2 (the lower of the two
//   middle groups for an even count), so the row's figure is one real group's measurement;
// - its status is the worst of the groups' (one wrong group makes the row invalid: no figure then,
//   since a wrong result is never reported as a throughput), its errors all of theirs;
// - its ranks are every group's ranks, in rank order, and `groups` keeps each group's value, status
//   and repetition spread; `idle` names the ranks that measured nothing at this count.
// Throws std::invalid_argument when `groups` is empty.
ResultRow combine_group_rows(std::vector<GroupRow> groups, const std::vector<int>& idle);

// A group's typical relative repetition spread below and above its ranks' medians (the median over
// its ranks of (median - min) / median and (max - median) / median; 0 when nothing was measured).
std::pair<double, double> group_spread(const ResultRow& row);

// "single", "intra-node" or "inter-node": a group of `k` ranks on `nodes` nodes (harness/plan/plan.h's labels).
std::string group_topology(int k, int nodes);

}  // namespace gpuscale
