#pragma once
// A burn-in's drift and its `sustained` outliers (docs/acceptance.md), from the rows of its windows
// (harness/benchmarks/burn/burn.cpp: one row per window, each rank's figure in it). Pure: rows and rank
// identities in, the result file's analysis.burn and the sustained outliers out (analysis/run_analysis.h
// places them, with the corruption and the capacity, in the analysis object).
//
// For each burn kind with per-GPU figures (burn.gemm, burn.stream, burn.mix), over its n windows in
// time order and q = max(1, floor(n / 4)): a rank's start is the median of its first q windows, its end
// the median of its last q, its drift end / start - 1 and its worst window the lowest; the fleet's are
// the same over each window's median across the ranks. The rank is a `sustained` outlier when, by more
// than `fraction` (--outlier):
//   - it fell below its own start, more than the fleet did: end / start < (1 - fraction) x the fleet's
//     end / start (with 3 or more ranks; with fewer there are no peers, and the fleet's ratio is taken
//     as 1), and every one of its last q windows' median interval lies below every one of its first q
//     windows' (the fall is beyond the repetitions' noise; with no per-rank statistics, the values), or
//   - it fell below the fleet: in each of the last q windows its figure, and its median interval, are
//     below (1 - fraction) x that window's median over the ranks (3 or more ranks).
// So a GPU is named for disagreeing with its peers. A fleet that drifts as a whole (every GPU heats
// alike, or the machine's load changes) names no GPU: the fleet's drift is said beside the ranks', and
// a fleet whose most GPUs throttle alike is read there. burn.all_reduce has one figure for the group
// (its slowest member's): its drift is the fleet's, and it names no rank.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/result_file.h"

namespace gpuscale {

// The burn-in's rows of each benchmark, in window order; and q, the windows a start or an end takes
// (burn_capacity.h reads the same windows).
std::map<std::string, std::vector<const ResultRow*>> burn_windows(const std::vector<ResultRow>& rows);
std::size_t burn_quarter(std::size_t windows);

// {"burn": [{benchmark, unit, windows, fleet: {start, end, drift, worst, worst_window}, ranks: [{rank,
// host, device_index, start, end, drift, worst, worst_window}]}], "sustained": [outlier...]} where each
// outlier is as analysis.outliers holds them (kind "sustained", benchmark, hosts, ranks, value = end,
// median = the start or the fleet's, deficit, reason, unit, uuids and pci_bus_ids from `ranks`, the
// result file's ranks array), with "throttle_reasons": those its GPU's telemetry reported in its last
// windows (present only where the windows have telemetry, empty when it reported none). Empty lists when the rows hold no burn-in.
nlohmann::json burn_drift(const std::vector<ResultRow>& rows, const nlohmann::json& ranks, double fraction);

// The GPUs whose GEMM output disagreed with their peers' in a window (silent data corruption: the
// windows' sdc metrics, harness/benchmarks/burn/burn_sdc.h): benchmark, window, rank, host, device_index, local_rank,
// first_block, elements (the block's range), element and at (the first element that differs and its
// [row, column] of C, where the window narrowed it), agreeing, compared, uuids and pci_bus_ids.
nlohmann::json burn_corruption(const std::vector<ResultRow>& rows, const nlohmann::json& ranks);

// The drift for a terminal: one line per burn kind (the fleet's drift and its worst window), one per
// silent data corruption, then the capacity table; the
// sustained outliers are listed with the run's other outliers (format_fleet_outliers). "" when there is
// no burn-in.
std::string format_burn_drift(const nlohmann::json& burn);

}  // namespace gpuscale
