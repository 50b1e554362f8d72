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

// One group of a tiled GPU count (docs/fleet.md): gpu_count ranks that measured together, at the same
// time as the count's other groups (--tiling concurrent) or alone (sequential).
struct RowGroup {
  std::vector<std::string> hosts;  // distinct hosts of its ranks, in rank order
  std::vector<int> ranks;          // world ranks, ascending
  std::optional<double> value;     // its figure in the row's unit; null unless its measurement is ok
  RowStatus status = RowStatus::ok;
  double spread_down = 0;          // typical (median over its ranks) relative repetition spread below / above
  double spread_up = 0;
};

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
  // Fleet coverage (docs/fleet.md): every group of the count, the ranks that measured nothing at it,
  // and the pair matrices of the fleet benchmarks (an array, or null). The file also carries
  // group_summary (count, min, median, max, spread), written from the groups.
  std::vector<RowGroup> groups;
  std::vector<int> idle_ranks;
  nlohmann::json matrices;
};

void to_json(nlohmann::json& j, const RankValue& v);
void from_json(const nlohmann::json& j, RankValue& v);
void to_json(nlohmann::json& j, const RowGroup& g);
void from_json(const nlohmann::json& j, RowGroup& g);
void to_json(nlohmann::json& j, const ResultRow& r);
void from_json(const nlohmann::json& j, ResultRow& r);

// Stable identity of a row for matching across files: benchmark, canonical params, gpu_count.
std::string row_key(const ResultRow& r);

}  // namespace gpuscale
