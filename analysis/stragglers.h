#pragma once
// Stragglers: for each (benchmark, params, gpu_count) of independent work, the ranks whose value is
// more than `threshold` (a fraction, 0.10 by default) below the median of the row's ranks, named with
// host, rank, GPU index, UUID and PCI bus id (from ranks[].device.details when the backend records
// them; "-" otherwise).
//
// Collective rows are left out on purpose: in a collective every rank waits for the slowest, so the
// rank that arrives last measures the shortest time; per-rank collective figures cannot name it.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "text/text_table.h"
#include "results/result_file.h"

namespace gpuscale {

inline constexpr double kDefaultStragglerThreshold = 0.10;

struct Straggler {
  const ResultRow* row = nullptr;
  int rank = 0;
  std::string host;
  int device_index = 0;
  std::string uuid, pci_bus_id;  // "-" when the file does not record them
  double value = 0, median = 0;
  double deficit = 0;  // 1 - value / median
};

// Rows with status ok and at least two measured ranks; `doc` supplies ranks[].device.details.
std::vector<Straggler> find_stragglers(const nlohmann::json& doc, const std::vector<ResultRow>& rows,
                                       double threshold);

// The stragglers section of the run summary and the terminal report: a heading with the rule and the
// count, then one line per straggler (point, count, rank, host, value, median, below, device index,
// UUID, PCI bus id) within style.width.
std::string format_stragglers(const std::vector<Straggler>& list, double threshold, const TextStyle& style);

// The stragglers' part of the result file's "analysis" object (docs/results.md; the whole object is
// analysis/run_analysis.h's): straggler_threshold, straggler_rule and the ranks it names.
nlohmann::json straggler_analysis(const nlohmann::json& doc, const std::vector<ResultRow>& rows,
                                double threshold = kDefaultStragglerThreshold);

}  // namespace gpuscale
