#pragma once
// Synthetic result documents for the analysis unit tests: valid files built row by row. The rows are
// written in version 1's shape (easy to build by hand) and the document carries them as gpuscale
// writes them now (version 2), unless asked for version 1.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/result_set.h"
#include "result_doc.h"

namespace gpuscale::testing {

// One rank's value with repetitions spread +-spread around it.
inline nlohmann::json rank_json(int rank, const std::string& host, double v, double spread = 0.02,
                                nlohmann::json metrics = nlohmann::json::object()) {
  return {{"rank", rank}, {"host", host}, {"device_index", rank % 8}, {"value", v},
          {"stats", {{"n", 5}, {"median", v}, {"min", v * (1 - spread)}, {"max", v * (1 + spread)}, {"mean", v}, {"stddev", v * spread / 2}}},
          {"valid", true}, {"error", ""}, {"metrics", metrics}};
}

inline nlohmann::json row_json(const std::string& bench, const std::string& scope, nlohmann::json params, int k,
                               std::vector<double> values, const std::string& unit = "GB/s", double spread = 0.02) {
  nlohmann::json ranks = nlohmann::json::array();
  double sum = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    ranks.push_back(rank_json(static_cast<int>(i), i < 4 ? "h0" : "h1", values[i], spread));
    sum += values[i];
  }
  return {{"benchmark", bench}, {"scope", scope}, {"params", params}, {"gpu_count", k}, {"nodes", 1},
          {"topology", k == 1 ? "single" : "intra-node"}, {"unit", unit}, {"status", "ok"}, {"ranks", ranks},
          {"aggregate", scope == "independent" ? sum : values.front()}, {"scaling_efficiency", nullptr},
          {"efficiency_basis", "test"}, {"expected_peak", nullptr}, {"fraction_of_peak", nullptr},
          {"peak_source", "test"}, {"metrics", nlohmann::json::object()}, {"errors", nlohmann::json::array()}};
}

// Rows as a vector: a braced list of one json would otherwise become that json itself, not an array.
// The document is result_doc.h's minimal one with these rows and nranks GPUs on hosts h0 (ranks 0-3)
// and h1, each with a UUID and PCI bus id.
inline nlohmann::json doc_json(const std::vector<nlohmann::json>& rows, const std::string& device = "Test GPU",
                               int nranks = 8, const std::string& cluster = "testcluster", int version = kResultSchemaVersion) {
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
  doc["schema_version"] = version;
  doc["results"] = nlohmann::json::array();
  for (const auto& r : rows)
    doc["results"].push_back(version == 1 || !r["ranks"].is_array() ? r : nlohmann::json(r.get<ResultRow>()));
  doc["summary"]["rows"] = doc["summary"]["ok"] = rows.size();
  return doc;
}

inline LoadedResult loaded(const std::vector<nlohmann::json>& rows, const std::string& device = "Test GPU",
                           const std::string& label = "t.json") {
  return result_from_json(label, doc_json(rows, device));
}

}  // namespace gpuscale::testing
