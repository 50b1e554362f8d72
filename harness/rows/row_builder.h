#pragma once
// Turns the ranks' measurements of one (benchmark, params, GPU count) into a result row: per-rank
// statistics, status, aggregate throughput, scaling efficiency and fraction of the expected peak.
// Pure logic (no MPI), unit-tested directly.
#include <optional>
#include <string>
#include <vector>

#include "harness/benchmark.h"
#include "harness/rows/measurement_json.h"
#include "results/result_file.h"

namespace gpuscale {

struct RankEntry {
  int rank = 0;
  std::string host;
  int device_index = 0;
  RankSummary m;  // the rank's measurement, reduced on the rank (harness/rows/measurement_json.h)
};

struct RowInputs {
  std::string benchmark;
  Scope scope = Scope::independent;
  std::string unit;
  nlohmann::json params;
  int gpu_count = 1;
  int nodes = 1;
  std::string topology;
  std::vector<RankEntry> ranks;             // the participating ranks, in rank order
  std::optional<double> single_rank_value;  // independent: the value of the same point at 1 GPU (if valid)
  ExpectedPeak peak;                        // per device (independent, weak scaling) or per link (collective)
  std::optional<Efficiency> efficiency;     // unset: per_device for independent work, link_peak for collectives
};

ResultRow build_row(const RowInputs& in);

// Independent work: aggregate(k) / (k x single-rank value). nullopt when either is missing or not positive.
std::optional<double> independent_efficiency(std::optional<double> aggregate, int k, std::optional<double> single);

}  // namespace gpuscale
