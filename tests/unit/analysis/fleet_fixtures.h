#pragma once
// Synthetic fleet result documents (the format of issue 14: rows' groups and group_summary, the
// matrices of the fleet benchmarks, analysis.outliers and outlier_hosts) with random values around a
// level, one host optionally slowed by a factor. The outlier analysis in the document is computed from
// those values by the real rule (analysis/outliers.h), as gpuscale run does, never written by hand.
#include <algorithm>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/fleet_outliers.h"
#include "analysis/outliers.h"
#include "analysis_fixtures.h"
#include "core/error.h"
#include "core/stats.h"

namespace gpuscale::testing {

struct FleetSpec {
  int nodes = 8;
  int gpus_per_node = 2;
  int slow = -1;          // index of the slowed host, -1: none
  double factor = 0.5;    // its figures are multiplied by this
  double noise = 0.02;    // +- relative noise of every figure
  bool analysis = true;   // write analysis.outliers and outlier_hosts
  // The node-pair row as the sendrecv measures it, rail by rail: a matrix per rail (gpus_per_node of
  // them) and the node matrix as each pair's slowest rail. The analysis is then the run's own
  // (fleet_outliers over the document's rows).
  bool rails = false;
  int slow_rail = -1;     // with rails: the slowed host is slow on this rail only (a NIC), nowhere else
  bool nics = false;      // the ranks' identities record their NIC (details.nic: mlx5_<local rank>, port 1)
};

// Host names with a random stem, so no test can lean on a fixed spelling.
inline std::vector<std::string> fleet_hosts(std::mt19937_64& gen, int n) {
  static const char* stems[] = {"gpu", "dgx", "node", "hgx-a", "c"};
  const std::string stem = stems[std::uniform_int_distribution<int>(0, 4)(gen)];
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(stem + std::to_string(100 + i));
  return out;
}

// An entry of analysis.outliers with every field of the format.
inline nlohmann::json outlier_entry(const std::string& kind, const std::vector<std::string>& hosts, const std::vector<int>& ranks,
                                    const std::string& benchmark, double value, double median) {
  return {{"kind", kind}, {"hosts", hosts}, {"ranks", ranks}, {"value", value}, {"median", median},
          {"deficit", 1 - value / median}, {"reason", "planted by the test"}, {"benchmark", benchmark},
          {"params", nlohmann::json::object()}, {"uuids", nlohmann::json::array()},
          {"pci_bus_ids", nlohmann::json::array()}};
}

// The document loaded, or nullopt when the result schema itself refuses it (once the schema describes
// the fleet fields, it may catch a hostile value before the fleet reader sees it: also a refusal). Its
// contradictions are reported, not refused, as `report --lenient` reads it: the fleet view must cope.
inline std::optional<LoadedResult> load_unless_schema_refuses(const std::string& label, const nlohmann::json& doc) {
  try {
    return result_from_json(label, doc, Contradictions::report);
  } catch (const Error& e) {
    if (std::string(e.what()).find("does not match the result schema") == std::string::npos) throw;
    return std::nullopt;
  }
}

inline nlohmann::json fleet_doc(const FleetSpec& s, std::mt19937_64& gen, std::vector<std::string>* hosts_out = nullptr) {
  using nlohmann::json;
  std::uniform_real_distribution<double> u(1 - s.noise, 1 + s.noise);
  const auto hosts = fleet_hosts(gen, s.nodes);
  if (hosts_out) *hosts_out = hosts;
  const int g = s.gpus_per_node, n = s.nodes * g;
  auto host_of = [&](int rank) { return hosts[static_cast<std::size_t>(rank / g)]; };
  const bool nic_fault = s.rails && s.slow_rail >= 0;  // only the slow host's rail s.slow_rail is slow
  auto slowed_on = [&](const std::string& h, int rail) {
    const bool hit = s.slow >= 0 && h == hosts[static_cast<std::size_t>(s.slow)] && (!nic_fault || rail == s.slow_rail);
    return hit ? s.factor : 1.0;
  };
  auto slowed = [&](const std::string& h) { return nic_fault ? 1.0 : slowed_on(h, -1); };
  auto ranks_of = [&](int node) {
    std::vector<int> r;
    for (int k = 0; k < g; ++k) r.push_back(node * g + k);
    return r;
  };
  auto fix_hosts = [&](ResultRow& row) {
    for (auto& r : row.ranks) r.host = host_of(r.rank);
  };
  std::vector<json> rows;
  json found = json::array();  // analysis.outliers
  std::set<std::string> suspects;
  // A lenient false-alarm rate: these fleets of 6 to 12 nodes are about what the readers do with
  // outliers, and at the run's 1% so few nodes name a half-speed node only when their noise allows.
  OutlierRule rule;
  rule.false_alarm = 0.3;
  auto record = [&](const Outlier& o, const char* benchmark, int gpu_count) {
    auto e = outlier_json(o);
    e["benchmark"] = benchmark;
    e["gpu_count"] = gpu_count;
    e["params"] = json::object();
    e["uuids"] = e["pci_bus_ids"] = json::array();
    found.push_back(e);
    if (o.kind == OutlierKind::node) suspects.insert(o.hosts.front());
  };
  const double level = std::uniform_real_distribution<double>(500, 5000)(gen);
  json stream_params = {{"dtype", "fp64"}, {"array_bytes", 1 << 20}, {"elements", 1 << 17}};
  for (int k : std::set<int>{1, g}) {
    std::vector<RowGroup> groups;
    std::vector<double> values;
    std::vector<OutlierSample> samples;
    for (int first = 0; first + k <= n; first += k) {
      std::vector<int> ranks;
      for (int r = first; r < first + k; ++r) ranks.push_back(r);
      const double v = k * level * u(gen) * slowed(host_of(first));
      RowGroup group;
      group.hosts = {host_of(first)};
      group.ranks = ranks;
      group.value = v;
      group.spread_down = group.spread_up = 0.01;
      groups.push_back(group);
      values.push_back(v);
      samples.push_back({{host_of(first)}, ranks, v, 0.01, 0.01});
    }
    // The row lists every group's ranks (harness/rows/row_groups.cpp).
    auto row = result_row("stream.triad", "independent", stream_params, k, std::vector<double>(static_cast<std::size_t>(n), level));
    fix_hosts(row);
    row.groups = groups;  // the writer adds group_summary from them
    row.aggregate = median_of(values);
    rows.push_back(row);
    for (const auto& o : find_outliers(OutlierKind::group, samples, rule)) record(o, "stream.triad", k);
  }
  // The node-pair matrix and each node's GPU-pair matrix.
  const double bw = std::uniform_real_distribution<double>(10, 50)(gen);
  PairMatrix pm;
  pm.hosts = hosts;
  pm.values.assign(static_cast<std::size_t>(s.nodes), std::vector<double>(static_cast<std::size_t>(s.nodes), NAN));
  json values = json::array(), member_ranks = json::array();
  for (int i = 0; i < s.nodes; ++i) {
    pm.ranks.push_back(ranks_of(i));
    member_ranks.push_back(ranks_of(i));
  }
  const std::size_t nn = static_cast<std::size_t>(s.nodes);
  auto as_json = [&](const std::vector<std::vector<double>>& cells) {
    json out = json::array();
    for (std::size_t i = 0; i < nn; ++i) {
      json line = json::array();
      for (std::size_t j = 0; j < nn; ++j) line.push_back(i == j ? json(nullptr) : json(cells[i][j]));
      out.push_back(line);
    }
    return out;
  };
  json rail_matrices = json::array();
  if (!s.rails) {
    for (int i = 0; i < s.nodes; ++i)
      for (int j = i + 1; j < s.nodes; ++j)
        pm.values[i][j] = pm.values[j][i] = bw * u(gen) * std::min(slowed(hosts[i]), slowed(hosts[j]));
  } else {
    for (int r = 0; r < g; ++r) {
      std::vector<std::vector<double>> cells(nn, std::vector<double>(nn, NAN));
      for (std::size_t i = 0; i < nn; ++i)
        for (std::size_t j = i + 1; j < nn; ++j) {
          cells[i][j] = cells[j][i] = bw * u(gen) * std::min(slowed_on(hosts[i], r), slowed_on(hosts[j], r));
          if (r == 0 || cells[i][j] < pm.values[i][j]) pm.values[i][j] = pm.values[j][i] = cells[i][j];  // the slowest rail
        }
      json rail_ranks = json::array();
      for (int i = 0; i < s.nodes; ++i) rail_ranks.push_back({i * g + r});
      rail_matrices.push_back({{"kind", "rail"}, {"rail", r}, {"hosts", hosts}, {"ranks", rail_ranks}, {"labels", hosts},
                               {"values", as_json(cells)}, {"directed", false}});
    }
  }
  values = as_json(pm.values);
  auto pairs_row = result_row("pairs.sendrecv", "collective", {{"size_bytes", 1 << 20}}, n, std::vector<double>(static_cast<std::size_t>(n), bw));
  fix_hosts(pairs_row);
  json pairs = pairs_row;
  pairs["matrices"] = json::array({{{"kind", "node"}, {"hosts", hosts}, {"ranks", member_ranks}, {"labels", hosts},
                                    {"values", values}, {"directed", false}}});
  if (s.rails) pairs["matrices"][0]["note"] = "each pair's slowest rail";
  for (const auto& m : rail_matrices) pairs["matrices"].push_back(m);
  rows.push_back(pairs);
  for (const auto& o : matrix_outliers(pm, OutlierKind::node, rule)) record(o, "pairs.sendrecv", n);
  // Measured once at the job's size, as pairs: every node's GPU pairs (its matrices' members are the job's ranks).
  auto gpu_pairs_row = result_row("gpu_pairs.sendrecv", "collective", {{"size_bytes", 1 << 20}}, n, std::vector<double>(static_cast<std::size_t>(n), bw));
  fix_hosts(gpu_pairs_row);
  json gpu_pairs = gpu_pairs_row;
  gpu_pairs["matrices"] = json::array();
  const double peer = std::uniform_real_distribution<double>(100, 400)(gen);
  for (int i = 0; i < s.nodes; ++i) {
    json gv = json::array(), granks = json::array(), labels = json::array();
    for (int a = 0; a < g; ++a) {
      json line = json::array();
      for (int b = 0; b < g; ++b) line.push_back(a == b ? json(nullptr) : json(peer * u(gen) * slowed(hosts[i])));
      gv.push_back(line);
      granks.push_back({i * g + a});
      labels.push_back("GPU" + std::to_string(a));
    }
    gpu_pairs["matrices"].push_back({{"kind", "gpu"}, {"hosts", std::vector<std::string>(static_cast<std::size_t>(g), hosts[i])},
                                     {"ranks", granks}, {"labels", labels}, {"values", gv}, {"directed", false}});
  }
  rows.push_back(gpu_pairs);

  auto doc = doc_json(rows, "Test GPU", n);
  for (auto& r : doc["ranks"]) {
    r["host"] = host_of(r["rank"].get<int>());
    r["local_rank"] = r["rank"].get<int>() % g;
    if (s.nics) r["device"]["details"]["nic"] = {{"device", "mlx5_" + std::to_string(r["rank"].get<int>() % g)}, {"port", 1}};
  }
  doc["hosts"] = json::array();
  for (int i = 0; i < s.nodes; ++i) doc["hosts"].push_back({{"name", hosts[i]}, {"node_index", i}, {"cpu_model", "x"}, {"ranks", ranks_of(i)}});
  if (s.analysis) {
    doc["analysis"] = {{"straggler_threshold", 0.1}, {"stragglers", json::array()}, {"outliers", found},
                       {"outlier_hosts", std::vector<std::string>(suspects.begin(), suspects.end())},
                       {"outlier_rule", {{"fraction", rule.fraction}, {"min_effect", rule.min_effect}, {"false_alarm", rule.false_alarm}}}};
    if (s.rails) doc["analysis"].update(fleet_outliers(result_from_json("fleet.json", doc).rows, doc["ranks"], rule));
  }
  return doc;
}

}  // namespace gpuscale::testing
