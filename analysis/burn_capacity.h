#pragma once
// The capacity numbers of a burn-in (docs/acceptance.md, "Capacity numbers"), the inputs of capacity
// planning: per burn kind and GPU model, the throughput per GPU at the start of the burn-in (boost: a
// cool GPU at its boost clocks) and at its end (sustained), and the power per GPU and per node at
// sustained load (W: the heat to remove). Start and end are the medians over the first and last q
// windows of burn_drift.h; power is the mean of each GPU's (or node's, scope "node": RAPL) average
// power over the last q windows, from the windows' energy (health/row_energy.h). Pure: rows and rank
// identities in, analysis.capacity out.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/result_file.h"

namespace gpuscale {

// [{benchmark, unit, model, gpus, nodes, windows, per ("gpu", or "job" where the kind has one figure
// for the whole job: all_reduce), boost, sustained, sustained_ratio, power_scope ("gpu", "node" or
// null), power_per_gpu_w, power_per_node_w {median, max}, work_per_j, work_per_j_unit, power_invalid
// (why a power is null)}]. Empty when the rows hold no burn-in. `ranks`: the result file's ranks
// (device names give the model).
nlohmann::json burn_capacity(const std::vector<ResultRow>& rows, const nlohmann::json& ranks);

// The table for a terminal ("" when there is none).
std::string format_burn_capacity(const nlohmann::json& capacity);

}  // namespace gpuscale
