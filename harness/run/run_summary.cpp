#include "harness/run/run_summary.h"

#include <map>

namespace gpuscale {

namespace {

// Rows per status, keyed by the status's name as the file spells it (every status present, 0 or more).
std::map<std::string, std::size_t> count_by_status(const std::vector<ResultRow>& rows) {
  std::map<std::string, std::size_t> counts;
  for (RowStatus s : {RowStatus::ok, RowStatus::invalid, RowStatus::failed, RowStatus::skipped})
    counts[std::string(row_status_name(s))] = 0;
  for (const auto& r : rows) ++counts[std::string(row_status_name(r.status))];
  return counts;
}

}  // namespace

bool rows_valid(const std::vector<ResultRow>& rows) {
  const auto counts = count_by_status(rows);
  return counts.at("invalid") == 0 && counts.at("failed") == 0;
}

nlohmann::json summary_json(const std::vector<ResultRow>& rows, bool complete, int code, const std::string& interrupted) {
  nlohmann::json out = {
      {"complete", complete},
      {"valid", rows_valid(rows)},
      {"rows", rows.size()},
      {"exit_code", complete || !interrupted.empty() ? nlohmann::json(code) : nlohmann::json(nullptr)},
      {"interrupted", interrupted.empty() ? nlohmann::json(nullptr) : nlohmann::json(interrupted)}};
  for (const auto& [status, n] : count_by_status(rows)) out[status] = n;
  return out;
}

}  // namespace gpuscale
