#pragma once
// The result file (schema version 1): one JSON document per run. docs/results.md describes every
// field; results/schema/result-v1.schema.json is the JSON Schema every writer and reader checks.
// Rows are keyed by (benchmark, params, gpu_count), which is how report/compare/check match them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/stats.h"

namespace gpuscale {

inline constexpr const char* kResultSchemaName = "gpuscale.result";
inline constexpr int kResultSchemaVersion = 1;

// One rank's measurement of one (benchmark, params, gpu_count).
struct RankValue {
  int rank = 0;
  std::string host;
  int device_index = 0;
  std::optional<double> value;  // median over repetitions of the row's unit; null if nothing measured
  RepStats stats;
  bool valid = true;            // verification passed
  std::string error;            // why not valid / why it failed
  nlohmann::json metrics = nlohmann::json::object();  // extra per-rank figures (time_us, algbw, ...)
};

enum class RowStatus { ok, invalid, failed, skipped };
std::string_view row_status_name(RowStatus s);
std::optional<RowStatus> parse_row_status(std::string_view s);

struct ResultRow {
  std::string benchmark;                            // registry key, e.g. "stream.triad"
  std::string scope;                                // "independent" or "collective"
  nlohmann::json params = nlohmann::json::object();  // the parameter point
  int gpu_count = 1;
  int nodes = 1;                                     // nodes spanned by the gpu_count ranks
  std::string topology;                              // "single", "intra-node" or "inter-node"
  std::string unit;                                  // "GB/s", "TFLOP/s"
  RowStatus status = RowStatus::ok;
  std::vector<RankValue> ranks;
  std::optional<double> aggregate;                   // sum over ranks, or the collective's busbw
  std::optional<double> scaling_efficiency;
  std::string efficiency_basis;                      // how the efficiency was computed, or why it is null
  std::optional<double> expected_peak;               // per device (independent) or link (collective)
  std::optional<double> fraction_of_peak;
  std::string peak_source;                           // where the peak came from, or why it is unknown
  nlohmann::json metrics = nlohmann::json::object();  // row-level figures (collective: size, time, algbw, busbw, wrong)
  std::vector<std::string> errors;
};

void to_json(nlohmann::json& j, const RankValue& v);
void from_json(const nlohmann::json& j, RankValue& v);
void to_json(nlohmann::json& j, const ResultRow& r);
void from_json(const nlohmann::json& j, ResultRow& r);

// Stable identity of a row for matching across files: benchmark, canonical params, gpu_count.
std::string row_key(const ResultRow& r);

}  // namespace gpuscale
