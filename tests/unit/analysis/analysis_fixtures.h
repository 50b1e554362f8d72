#pragma once
// Synthetic result documents for the analysis unit tests: valid files built row by row, as gpuscale
// writes them (version 2). Version 1 is read only through results/result_upgrade.h and tested there.
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
  for (int r = 0; r < nranks; ++r)
    doc["ranks"].push_back({{"rank", r}, {"host", r < 4 ? "h0" : "h1"}, {"local_rank", r % 4},
                            {"device", {{"backend", "cuda"}, {"name", device}, {"index", r % 8}, {"memory_bytes", 1},
                                        {"free_memory_bytes", 1},
                                        {"details", {{"uuid", "GPU-" + std::to_string(r)},
                                                     {"pci_bus_id", "0000:0" + std::to_string(r) + ":00.0"}}}}}});
  doc["results"] = rows;
  doc["summary"]["rows"] = doc["summary"]["ok"] = rows.size();
  return doc;
}

inline LoadedResult loaded(const std::vector<nlohmann::json>& rows, const std::string& device = "Test GPU",
                           const std::string& label = "t.json") {
  return result_from_json(label, doc_json(rows, device));
}

}  // namespace gpuscale::testing
