#pragma once
// A minimal complete result document (the current version), with every field
// harness/run/runner.cpp's header() writes, for the result-file tests to start from and break one field at
// a time. Version-1 documents: tests/unit/results/result_v1_doc.h (the upgrader's tests only).
#include <algorithm>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "results/result_file.h"

namespace gpuscale::testing_doc {

inline ResultRow sample_row() {
  ResultRow r;
  r.benchmark = "stream.triad";
  r.scope = "independent";
  r.params = {{"dtype", "fp64"}, {"array_bytes", 1048576}, {"elements", 131072}};
  r.gpu_count = 2;
  r.nodes = 1;
  r.topology = "intra-node";
  r.unit = "GB/s";
  r.status = RowStatus::ok;
  for (int rank = 0; rank < 2; ++rank) {
    RankValue v;
    v.rank = rank;
    v.host = "node0";
    v.device_index = rank;
    v.stats = compute_stats({100.0 + rank, 101.0 + rank, 102.0 + rank});
    v.value = v.stats.median;
    v.metrics = {{"bytes_per_pass", 3145728.0}};
    r.ranks.push_back(v);
  }
  r.aggregate = 203.0;
  r.scaling_efficiency = 0.98;
  r.efficiency_basis = "aggregate / (gpu_count x value at 1 GPU)";
  r.expected_peak = 250.0;
  r.fraction_of_peak = 203.0 / 500.0;
  r.peak_source = "test";
  return r;
}

inline nlohmann::json minimal_result_doc() {
  auto peak = [](const char* source) { return nlohmann::json{{"value", nullptr}, {"source", source}}; };
  nlohmann::json ranks = nlohmann::json::array();
  for (int r = 0; r < 2; ++r)
    ranks.push_back({{"rank", r},
                     {"host", "node0"},
                     {"local_rank", r},
                     {"device",
                      {{"backend", "cpu"},
                       {"name", "Test CPU"},
                       {"index", 0},
                       {"memory_bytes", 1ull << 34},
                       {"free_memory_bytes", 1ull << 33},
                       {"details", nlohmann::json::object()}}}});
  return {{"schema", kResultSchemaName},
          {"schema_version", kResultSchemaVersion},
          {"tool", {{"name", "gpuscale"}, {"version", "0.1.0"}, {"commit", "0123abc"}}},
          {"created_utc", "2026-01-02T03:04:05Z"},
          {"finished_utc", "2026-01-02T03:14:05Z"},
          {"cluster", {{"name", "testcluster"}, {"source", "--cluster"}}},
          {"backend", "cpu"},
          {"command_line", {"gpuscale", "run", "--quick"}},
          {"environment", {{"OMP_NUM_THREADS", "2"}, {"NCCL_DEBUG", "WARN"}}},
          {"test_fault", nullptr},
          {"slurm", nullptr},
          {"mpi", {{"library", "Open MPI v4.1.4"}, {"world_size", 2}}},
          {"software", {{"driver", nullptr}, {"cuda_runtime", nullptr}, {"nccl", nullptr}}},
          {"hosts", {{{"name", "node0"}, {"node_index", 0}, {"cpu_model", "Test CPU"}, {"ranks", {0, 1}}}}},
          {"ranks", ranks},
          {"links", {{"intra_node", peak("unknown")}, {"inter_node", peak("one node")}}},
          {"plan",
           {{"gpu_counts", {1, 2}},
            {"benchmarks", {"stream.triad"}},
            {"points", 1},
            {"seed", 12345},
            {"options", {{"quick", true}}}}},
          {"results", {nlohmann::json(sample_row())}},
          {"summary",
           {{"complete", true},
            {"valid", true},
            {"rows", 1},
            {"ok", 1},
            {"invalid", 0},
            {"failed", 0},
            {"skipped", 0},
            {"exit_code", 0}}}};
}

// `doc` with a header that says what its rows are, as the run writes it (the semantic validator,
// results/result_semantics.h, holds every reader to it): the summary's counts, the plan's benchmarks
// and GPU counts, and the earlier attempts the rows name. Rows of either version (each has "status").
inline nlohmann::json agreeing(nlohmann::json doc) {
  std::map<std::string, std::size_t> count;
  nlohmann::json benchmarks = nlohmann::json::array(), counts = nlohmann::json::array();
  int attempts = 0;
  for (const auto& r : doc["results"]) {
    ++count[r["status"].get<std::string>()];
    if (std::find(benchmarks.begin(), benchmarks.end(), r["benchmark"]) == benchmarks.end()) benchmarks.push_back(r["benchmark"]);
    if (std::find(counts.begin(), counts.end(), r["gpu_count"]) == counts.end()) counts.push_back(r["gpu_count"]);
    if (r.contains("attempt")) attempts = std::max(attempts, r["attempt"].get<int>());
  }
  std::sort(counts.begin(), counts.end());
  if (counts.empty()) counts.push_back(1);
  doc["plan"]["benchmarks"] = benchmarks;
  doc["plan"]["gpu_counts"] = counts;
  auto& s = doc["summary"];
  s["rows"] = doc["results"].size();
  for (const char* k : {"ok", "invalid", "failed", "skipped"}) s[k] = count[k];
  s["valid"] = count["invalid"] + count["failed"] == 0;
  if (s["exit_code"].is_number()) s["exit_code"] = s["valid"].get<bool>() ? 0 : 1;
  if (attempts > 0) {
    doc["attempts"] = nlohmann::json::array();
    for (int a = 0; a < attempts; ++a)
      doc["attempts"].push_back({{"attempt", a}, {"created_utc", doc["created_utc"]}, {"finished_utc", nullptr},
                                 {"command_line", doc["command_line"]}, {"summary", nlohmann::json::object()}});
  }
  return doc;
}

}  // namespace gpuscale::testing_doc
