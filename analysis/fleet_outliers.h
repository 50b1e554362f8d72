#pragma once
// The outliers of a run's rows (docs/fleet.md): the groups of each tiled GPU count (a collective's at
// its largest message size only: smaller ones measure latency), the nodes and node pairs of each
// node-pair matrix and of each rail's, the GPUs and GPU pairs of each node's GPU-pair matrix, by the
// rule of analysis/outliers.h; then attributed to hosts. Pure: rows and rank identities in, the
// result file's analysis.outliers / outlier_hosts out. `gpuscale run` writes it at the end of a run.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/outliers.h"
#include "results/result_file.h"

namespace gpuscale {

// {"outliers": [...], "outlier_hosts": [...], "outlier_rule": {...}}:
// - every outlier as outlier_json gives it, with the row it came from (benchmark, params, gpu_count)
//   and the GPUs of its ranks (uuids, pci_bus_ids: from the rank identities, where the backend knows
//   them);
// - the suspect hosts: a node named by a node-pair matrix, the node of a GPU named by its GPU-pair
//   matrix, the one host of an outlier group that stays inside one node. A slow group or pair that
//   spans a suspect host carries "explained_by": that host (it is slow because the host is);
// - an outlier of a rail's matrix carries "rail" and "nics" (per rank of the record: {device, port} of
//   the NIC nearest its GPU from ranks[].device.details.nic, or null, with "nic_note" saying why);
// - a node or pair outlier of a node-pair matrix that a rail outlier of the same benchmark and GPU count
//   explains (the same host, or the same two hosts) carries "explained_by_rail" (and a node's
//   "explained_by" its host): one fault is listed once, on its rail;
// - `ranks` is the result file's ranks array (identities, by rank).
nlohmann::json fleet_outliers(const std::vector<ResultRow>& rows, const nlohmann::json& ranks, const OutlierRule& rule);

// Sets an outlier record's "uuids" and "pci_bus_ids": the GPUs of `ranks`, from the result file's rank
// identities (`identities`, its ranks array; CUDA knows them, the CPU backend does not).
void add_outlier_gpus(nlohmann::json& out, const std::vector<int>& ranks, const nlohmann::json& identities);

// The outliers for a terminal (the end of the run summary, so a Slurm log shows them): the suspect
// hosts, then one line per outlier that no suspect host explains and a count of those it does, at
// most `max_lines` lines of outliers. "" when there are none.
std::string format_fleet_outliers(const nlohmann::json& fleet, std::size_t max_lines = 20);

}  // namespace gpuscale
