#pragma once
// The result file (schema version 2; version 1 is still read, results/result_upgrade.h): one JSON document per run.
// docs/results.md describes every field; results/schema/result-v<N>.schema.json is the JSON Schema of
// version N. Rows are keyed by (benchmark, params, gpu_count), which is how report/compare/check match
// them. A version-2 row stores its ranks as columns (results/result_row_v2.cpp); to_json writes that,
// from_json reads it. A version-1 row is read only through results/result_upgrade.h.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/stats.h"

namespace gpuscale {

inline constexpr const char* kResultSchemaName = "gpuscale.result";
inline constexpr int kResultSchemaVersion = 2;
inline constexpr int kOldestResultSchemaVersion = 1;  // the oldest version readers still accept

// One rank's measurement of one (benchmark, params, gpu_count).
struct RankValue {
  int rank = 0;
  std::string host;
  int device_index = 0;
  std::optional<double> value;  // median over repetitions of the row's unit; null if nothing measured
  RepStats stats;               // n == 0 when the file kept no per-rank statistics (v2 without --rank-stats)
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

// A row's repetition spread (the noise band compare uses): over its measured ranks,
// down = max (median - lo) / median, up = max (hi - median) / median, [lo, hi] each rank's median
// confidence interval (RepStats); reps = the most repetitions.
struct RowSpread {
  double down = 0, up = 0;
  std::size_t reps = 0;
  bool operator==(const RowSpread&) const = default;
};
// The spread of ranks' statistics; nullopt when no rank has any (n == 0 everywhere).
std::optional<RowSpread> spread_of_ranks(const std::vector<RankValue>& ranks);

// Why a row's figure is not what it seems to be (docs/results.md, "Flags"), set when the row is built
// (harness/rows/row_flags.h): "above_peak" (above its expected peak), "superlinear" (scaling efficiency
// above 100% beyond the noise), "cache_resident" (a memory benchmark whose footprint a cache holds),
// "quick" (a --quick point, sized to be fast, not to be representative). Readers that do not know a
// kind ignore it.
struct RowFlag {
  std::string kind;
  std::string reason;  // one line: the likely cause
  bool operator==(const RowFlag&) const = default;
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
  std::vector<RowFlag> flags;                        // empty: nothing to say (written only when not empty)
  // Fleet coverage (docs/fleet.md): every group of the count, the ranks that measured nothing at it,
  // and the pair matrices of the fleet benchmarks (an array, or null). The file also carries
  // group_summary (count, min, median, max, spread), written from the groups.
  std::vector<RowGroup> groups;
  std::vector<int> idle_ranks;
  nlohmann::json matrices;
  std::optional<RowSpread> spread;  // as read from a v2 file; the writer recomputes it when ranks have stats
  std::optional<int> attempt;       // the run attempt that measured it (gpuscale run --resume)
  std::optional<int> input;         // merge: index into merged_from of the file it came from
  bool rank_stats = false;          // write each rank's statistics (gpuscale run --rank-stats; kept on read)
};

void to_json(nlohmann::json& j, const RankValue& v);
void from_json(const nlohmann::json& j, RankValue& v);
void to_json(nlohmann::json& j, const RowGroup& g);
void from_json(const nlohmann::json& j, RowGroup& g);
// Writes and reads the version-2 row (from_json is result_row_from_v2).
void to_json(nlohmann::json& j, const ResultRow& r);
void from_json(const nlohmann::json& j, ResultRow& r);
// The reader of the version-2 row, for a row already validated against its row schema. Throws
// nlohmann::json::exception or gpuscale::Error (naming the field) on a row it cannot take.
ResultRow result_row_from_v2(const nlohmann::json& j);
namespace detail {
// Every row field but ranks, groups and spread (the same in both versions: the upgrader reads them too).
void read_common_row_fields(const nlohmann::json& j, ResultRow& r);
}  // namespace detail

// Stable identity of a row for matching across files: benchmark, canonical params, gpu_count.
std::string row_key(const ResultRow& r);

}  // namespace gpuscale
