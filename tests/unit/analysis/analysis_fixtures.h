#pragma once
// Synthetic result documents for the analysis unit tests: valid files built row by row, as gpuscale
// writes them (version 2). Version 1 is read only through results/result_upgrade.h and tested there.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/result_set.h"
#include "result_doc.h"

namespace gpuscale::testing {

// One rank's value with repetitions spread +-spread around it.
inline RankValue rank_value(int rank, const std::string& host, double v, double spread = 0.02) {
  RankValue r;
  r.rank = rank;
  r.host = host;
  r.device_index = rank % 8;
  r.value = v;
  r.stats.n = 5;
  r.stats.median = r.stats.mean = v;
  r.stats.min = r.stats.lo = v * (1 - spread);
  r.stats.max = r.stats.hi = v * (1 + spread);
  r.stats.stddev = v * spread / 2;
  return r;
}

// A row as gpuscale writes it (version 2, with per-rank statistics), ranks 0-3 on h0, the rest on h1.
inline ResultRow result_row(const std::string& bench, const std::string& scope, nlohmann::json params, int k,
                            std::vector<double> values, const std::string& unit = "GB/s", double spread = 0.02) {
  ResultRow r;
  double sum = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    r.ranks.push_back(rank_value(static_cast<int>(i), i < 4 ? "h0" : "h1", values[i], spread));
    sum += values[i];
  }
  r.benchmark = bench;
  r.scope = scope;
  r.params = std::move(params);
  r.gpu_count = k;
  r.topology = k == 1 ? "single" : "intra-node";
  r.unit = unit;
  r.aggregate = scope == "independent" ? sum : values.front();
  r.efficiency_basis = r.peak_source = "test";
  r.rank_stats = true;
  return r;
}

inline nlohmann::json row_json(const std::string& bench, const std::string& scope, nlohmann::json params, int k,
                               std::vector<double> values, const std::string& unit = "GB/s", double spread = 0.02) {
  return result_row(bench, scope, std::move(params), k, std::move(values), unit, spread);
}

// The row as the writer makes one of `status` (harness/rows/row_builder.cpp): invalid or failed, its last
// rank's check failed with `why` and no figure; skipped, no rank value and `why` as its reason.
inline nlohmann::json with_status(nlohmann::json row, const std::string& status, const std::string& why = "planted by the test") {
  row["status"] = status;
  if (status == "ok") return row;
  for (const char* k : {"aggregate", "scaling_efficiency", "fraction_of_peak"}) row[k] = nullptr;
  row["errors"] = {why};
  auto& ranks = row["ranks"];
  const std::size_t n = ranks["rank"].size();
  if (status == "skipped") {
    ranks["value"] = nlohmann::json(n, nullptr);
    ranks["valid"] = false;
    return row;
  }
  nlohmann::json valid = nlohmann::json(n, true);
  if (n > 0) valid[n - 1] = false;
  ranks["valid"] = valid;
  return row;
}

// Rows as a vector: a braced list of one json would otherwise become that json itself, not an array.
// The document is result_doc.h's minimal one with these rows and nranks GPUs on hosts h0 (ranks 0-3)
// and h1, each with a UUID and PCI bus id.
inline nlohmann::json doc_json(const std::vector<nlohmann::json>& rows, const std::string& device = "Test GPU",
                               int nranks = 8, const std::string& cluster = "testcluster") {
  auto doc = testing_doc::minimal_result_doc();
  doc["cluster"]["name"] = cluster;
  doc["backend"] = "cuda";
  doc["mpi"]["world_size"] = nranks;
  doc["ranks"] = nlohmann::json::array();
  doc["hosts"] = nlohmann::json::array();
  for (int r = 0; r < nranks; ++r) {
    const std::string host = r < 4 ? "h0" : "h1";
    doc["ranks"].push_back({{"rank", r}, {"host", host}, {"local_rank", r % 4},
                            {"device", {{"backend", "cuda"}, {"name", device}, {"index", r % 8}, {"memory_bytes", 1},
                                        {"free_memory_bytes", 1},
                                        {"details", {{"uuid", "GPU-" + std::to_string(r)},
                                                     {"pci_bus_id", "0000:0" + std::to_string(r) + ":00.0"}}}}}});
    if (r % 4 == 0) doc["hosts"].push_back({{"name", host}, {"node_index", r / 4}, {"cpu_model", "Test CPU"}, {"ranks", nlohmann::json::array()}});
    doc["hosts"].back()["ranks"].push_back(r);
  }
  // The header says what the rows are, as the run writes it (the semantic validator holds every reader to it).
  doc["results"] = rows;
  nlohmann::json benchmarks = nlohmann::json::array(), counts = nlohmann::json::array(), points = nlohmann::json::array();
  std::map<std::string, std::size_t> status;
  for (auto& row : doc["results"]) {
    if (std::find(benchmarks.begin(), benchmarks.end(), row["benchmark"]) == benchmarks.end()) benchmarks.push_back(row["benchmark"]);
    if (std::find(counts.begin(), counts.end(), row["gpu_count"]) == counts.end()) counts.push_back(row["gpu_count"]);
    const nlohmann::json point = {row["benchmark"], row["params"]};
    if (std::find(points.begin(), points.end(), point) == points.end()) points.push_back(point);
    ++status[row["status"].get<std::string>()];
    // Nodes and topology from the hosts its ranks are on (ranks 0-3 on h0, the rest on h1).
    if (!row.contains("groups") && row["ranks"].contains("hosts") && !row["ranks"]["hosts"].empty() &&
        row["ranks"]["rank"].size() == row["gpu_count"].get<std::size_t>()) {
      row["nodes"] = row["ranks"]["hosts"].size();
      if (row["gpu_count"].get<int>() > 1) row["topology"] = row["nodes"].get<int>() > 1 ? "inter-node" : "intra-node";
    }
  }
  std::sort(counts.begin(), counts.end());
  if (counts.empty()) counts.push_back(1);
  doc["plan"]["benchmarks"] = benchmarks;
  doc["plan"]["gpu_counts"] = counts;
  doc["plan"]["points"] = points.size();
  auto& sum = doc["summary"];
  sum["rows"] = rows.size();
  for (const char* k : {"ok", "invalid", "failed", "skipped"}) sum[k] = status[k];
  sum["valid"] = status["invalid"] + status["failed"] == 0;
  sum["exit_code"] = sum["valid"].get<bool>() ? 0 : 1;
  return doc;
}

inline LoadedResult loaded(const std::vector<nlohmann::json>& rows, const std::string& device = "Test GPU",
                           const std::string& label = "t.json") {
  return result_from_json(label, doc_json(rows, device));
}

}  // namespace gpuscale::testing
