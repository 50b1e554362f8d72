#pragma once
// The fleet data of a loaded result file (issue 14; the fields are described in docs/results.md and
// docs/fleet.md): each row's groups, the node-pair and GPU-pair matrices of the fleet benchmarks, and
// the run's outlier analysis (analysis.outliers, analysis.outlier_hosts). Pure extraction for the
// report, check and the drain list; old files have none of it and give an empty view.
//
// A result file is untrusted and the schema leaves these fields open, so every value is checked here.
// Drawing data that does not fit (a group without hosts, a matrix of the wrong shape, a negative or
// non-numeric figure) is left out of the view with a line in `problems` (the report shows them): a
// picture of part of the data is still worth having. The outlier analysis is what check fails on and
// what a drain list drains, so any problem there is refused instead: fleet_view throws gpuscale::Error.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/result_set.h"

namespace gpuscale {

// One disjoint group of gpu_count ranks that measured at a row's count.
struct FleetGroup {
  std::vector<std::string> hosts;
  std::vector<int> ranks;
  std::optional<double> value;  // nullopt: no figure (invalid, failed, skipped)
  std::string status;           // "ok" | "invalid" | "failed" | "skipped" | as written
};

// A row measured in groups (--tiling concurrent|sequential).
struct FleetRow {
  std::size_t row = 0;  // index into LoadedResult::rows
  std::vector<FleetGroup> groups;
  std::optional<double> median;  // group_summary.median, or the median of the groups' values
  bool intra_node = false;       // every group stays inside one node
  std::size_t measured() const;  // groups with a value
};

// A pair matrix of a fleet row: node pairs, node pairs on one rail, or the GPU pairs of one node.
struct FleetMatrix {
  std::size_t row = 0;   // index into LoadedResult::rows
  std::string kind;      // "node" | "rail" | "gpu"
  std::optional<int> rail;  // kind "rail": the local rank index of both nodes of each pair
  std::string note;         // what the file says of it ("each pair's slowest rail", unmeasured rails)
  std::vector<std::string> hosts, labels;
  std::vector<std::vector<int>> ranks;                    // per member (empty when the file has none)
  std::vector<std::vector<std::optional<double>>> values;  // M x M; nullopt: not measured
  bool directed = false;
  // The value of the pair (i, j), i != j: for an undirected matrix the upper triangle.
  std::optional<double> pair(std::size_t i, std::size_t j) const;
  std::size_t size() const { return hosts.size(); }
};

// An entry of analysis.outliers.
struct FleetOutlier {
  std::string kind;  // "gpu" | "node" | "pair" | "group"
  std::vector<std::string> hosts;
  std::vector<int> ranks;
  std::optional<double> value, median, deficit;
  std::string reason, benchmark, explained_by, unit;  // unit: absent in some files (then the benchmark's rows')
  nlohmann::json params = nlohmann::json::object();
  std::optional<int> gpu_count;
  std::vector<std::string> uuids, pci_bus_ids;
  std::optional<int> rail, explained_by_rail;  // an outlier of rail `rail`'s matrix; explained by that rail's outlier
  std::vector<std::string> nics;  // per rank of a rail outlier: "mlx5_1 port 1", or "-" where unknown
  std::string nic_note;           // why a NIC is unknown
  bool explained() const { return !explained_by.empty() || explained_by_rail.has_value(); }
};

struct FleetView {
  std::vector<FleetRow> rows;
  std::vector<FleetMatrix> matrices;
  bool analysed = false;  // the file has analysis.outliers (possibly empty)
  std::vector<FleetOutlier> outliers;
  bool hosts_listed = false;  // the file has analysis.outlier_hosts (possibly empty)
  std::vector<std::string> outlier_hosts;
  std::vector<std::string> problems;  // "/results/3/matrices/0: ...: not drawn"
  bool any() const { return !rows.empty() || !matrices.empty() || analysed; }
  bool suspect_host(const std::string& host) const;
};

// Throws gpuscale::Error("<file>: /analysis/outliers/2/hosts: ...") when the outlier analysis is malformed.
FleetView fleet_view(const LoadedResult& run);

// A member, pair or group named with its figure and the median it is set against.
struct FleetRanked {
  std::string label;  // "h3", "h3 - h5", "h3 GPU0 - GPU1"
  double value = 0, median = 0;
};

// The n lowest, lowest first (ties in input order).
// Members of a matrix by the median of their measured pairs, against the median of all its pairs.
std::vector<FleetRanked> lowest_members(const FleetMatrix& m, std::size_t n);
// Measured pairs, against the median of all the matrix's pairs; `prefix` goes before each label.
std::vector<FleetRanked> lowest_pairs(const FleetMatrix& m, std::size_t n, const std::string& prefix = "");
// Groups with a value, against the row's median; labelled by host (and ranks when a host has several
// groups). For a lower-is-better unit (a time) the highest come first: the slowest, always.
std::vector<FleetRanked> lowest_groups(const FleetRow& r, std::size_t n, bool lower_is_better = false);
// The median of a matrix's measured pairs (nullopt when none).
std::optional<double> matrix_median(const FleetMatrix& m);

// The rows the per-node bars and the fleet text show: rows whose groups stay inside one node, with two
// or more measured groups and a median above 0 (not a collective at 1 GPU); of each series (benchmark and parameters, collectives at their largest
// message size) the rows at 1 GPU and at the largest such count. Indices into view.rows, in file order.
std::vector<std::size_t> per_node_rows(const LoadedResult& run, const FleetView& view);

// Whether an outlier concerns a row: its benchmark (when it names one), its parameters (those it names)
// and its GPU count (when it names one).
bool outlier_of_row(const FleetOutlier& o, const ResultRow& row);

// What the outliers mark in a matrix: suspect members (node matrix: a host of analysis.outlier_hosts
// or of a node outlier of the row; rail matrix: the host of a node outlier of the row on that rail;
// GPU matrix: the ranks of a gpu outlier of the row) and the cells of the row's pair outliers (matched
// on ranks, or for node matrices on the two hosts; a rail's pair outliers on its own matrix only), both
// orders for an undirected matrix.
struct MatrixMarks {
  std::vector<bool> suspect;
  std::vector<std::pair<std::size_t, std::size_t>> cells;
};
MatrixMarks matrix_marks(const FleetMatrix& m, const ResultRow& row, const FleetView& view);

// Per group of a row: a group outlier of the row (matched on ranks, or hosts when either has no
// ranks), or a group on a suspect host.
std::vector<bool> group_marks(const FleetRow& r, const ResultRow& row, const FleetView& view);

// "stream.triad fp64 1G": a row's benchmark and point, as the fleet sections title it.
std::string row_point(const ResultRow& r);

// The host label of a group: "h3", or "h3 r4,5" when a host holds several groups of the row.
std::string group_label(const FleetRow& r, std::size_t g);

}  // namespace gpuscale
