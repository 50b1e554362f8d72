#pragma once
// Synthetic result documents for the analysis unit tests: valid version-1 files built row by row.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/result_set.h"

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
inline nlohmann::json doc_json(const std::vector<nlohmann::json>& row_list, const std::string& device = "Test GPU",
                               int nranks = 8, const std::string& cluster = "testcluster") {
  const nlohmann::json rows = row_list;
  nlohmann::json ranks = nlohmann::json::array();
  for (int r = 0; r < nranks; ++r)
    ranks.push_back({{"rank", r}, {"host", r < 4 ? "h0" : "h1"}, {"local_rank", r % 4},
                     {"device", {{"backend", "cuda"}, {"name", device}, {"index", r % 8}, {"memory_bytes", 1}, {"free_memory_bytes", 1},
                                 {"details", {{"uuid", "GPU-" + std::to_string(r)}, {"pci_bus_id", "0000:0" + std::to_string(r) + ":00.0"}}}}}});
  return {{"schema", "gpuscale.result"}, {"schema_version", 1},
          {"tool", {{"name", "gpuscale"}, {"version", "0"}, {"commit", "t"}}},
          {"created_utc", "2026-01-01T00:00:00Z"}, {"finished_utc", "2026-01-01T00:01:00Z"},
          {"cluster", {{"name", cluster}, {"source", "--cluster"}}}, {"backend", "cuda"},
          {"command_line", {"gpuscale"}}, {"environment", nlohmann::json::object()}, {"test_fault", nullptr},
          {"slurm", nullptr}, {"mpi", {{"library", "x"}, {"world_size", nranks}}},
          {"software", {{"driver", nullptr}, {"cuda_runtime", nullptr}, {"nccl", nullptr}}},
          {"hosts", {{{"name", "h0"}, {"node_index", 0}, {"cpu_model", "c"}, {"ranks", {0}}}}},
          {"ranks", ranks},
          {"links", {{"intra_node", {{"value", nullptr}, {"source", "t"}}}, {"inter_node", {{"value", nullptr}, {"source", "t"}}}}},
          {"plan", {{"gpu_counts", {1}}, {"benchmarks", nlohmann::json::array()}, {"points", 0}, {"seed", 0}, {"options", nlohmann::json::object()}}},
          {"results", rows},
          {"summary", {{"complete", true}, {"valid", true}, {"rows", rows.size()}, {"ok", rows.size()}, {"invalid", 0},
                       {"failed", 0}, {"skipped", 0}, {"exit_code", 0}}}};
}

inline LoadedResult loaded(const std::vector<nlohmann::json>& rows, const std::string& device = "Test GPU",
                           const std::string& label = "t.json") {
  return result_from_json(label, doc_json(rows, device));
}

}  // namespace gpuscale::testing
