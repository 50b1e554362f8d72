#pragma once
// One rank's measurement on its way to rank 0, reduced on the rank itself: its repetitions become their
// statistics (the row's value is their median), so what travels is a few numbers, not every
// repetition; the group-wide figures travel from the group's first rank only (they are identical on
// every member). Encoded as MessagePack (exact doubles, compact), one string per rank for
// World::gather_to_root.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/stats.h"
#include "harness/benchmark.h"

namespace gpuscale {

// What rank 0 takes of one rank's measurement to build a row (harness/rows/row_builder.h).
struct RankSummary {
  std::optional<RepStats> stats;  // of the repetitions; none when the rank timed none
  bool valid = true, failed = false, skipped = false;  // as in RankMeasurement
  std::string message;
  nlohmann::json metrics = nlohmann::json::object();      // this rank's extra figures
  nlohmann::json row_metrics = nlohmann::json::object();  // the group's first rank only
  std::optional<double> aggregate;                        // the group's first rank only
};

// `group_first`: this rank is its group's first (rank 0 of the group), whose group-wide figures count.
RankSummary summarize(const RankMeasurement& m, bool group_first);

std::string encode_summary(const RankSummary& s);
// Throws gpuscale::Error (exit 1) naming what is wrong when `bytes` is not an encoded summary.
RankSummary decode_summary(std::string_view bytes);

}  // namespace gpuscale
