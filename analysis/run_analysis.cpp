#include "analysis/run_analysis.h"

#include <set>
#include <string>

#include "analysis/burn_capacity.h"
#include "analysis/burn_drift.h"
#include "analysis/fleet_outliers.h"
#include "analysis/iteration_stragglers.h"

namespace gpuscale {
namespace {

using nlohmann::json;

// A burn-in's part: its drift, corruption and capacity beside the fleet's outliers, its sustained
// outliers after them, and every host either names among the suspects. The suspects stay one sorted
// list: a drain list that names a host twice, or in two places, would be read as two faults.
void add_burn_in(json& analysis, const std::vector<ResultRow>& rows, const json& ranks, double fraction) {
  auto drift = burn_drift(rows, ranks, fraction);
  if (drift["burn"].empty()) return;
  analysis["burn"] = std::move(drift["burn"]);
  analysis["sdc"] = burn_corruption(rows, ranks);
  analysis["capacity"] = burn_capacity(rows, ranks);
  std::set<std::string> suspects;
  for (const auto& h : analysis.value("outlier_hosts", json::array()))
    if (h.is_string()) suspects.insert(h.get<std::string>());
  for (const auto& e : analysis["sdc"]) suspects.insert(e["host"].get<std::string>());
  if (!analysis.contains("outliers") || !analysis["outliers"].is_array()) analysis["outliers"] = json::array();
  for (auto& o : drift["sustained"]) {
    suspects.insert(o["hosts"][0].get<std::string>());
    analysis["outliers"].push_back(std::move(o));
  }
  analysis["outlier_hosts"] = std::vector<std::string>(suspects.begin(), suspects.end());
}

}  // namespace

json run_analysis(const json& doc, const std::vector<ResultRow>& rows, const AnalysisRules& rules) {
  // A document without rank identities names no GPU (null, as the fleet and burn-in readers take it).
  static const json kNoRanks;
  const json& ranks = doc.is_object() && doc.contains("ranks") ? doc["ranks"] : kNoRanks;
  json analysis = straggler_analysis(doc, rows, rules.straggler_threshold);
  analysis.update(fleet_outliers(rows, ranks, rules.outlier));
  add_burn_in(analysis, rows, ranks, rules.burn_fraction());
  // The collectives' per-iteration stragglers (issue 45), only when a row's -I pass named one.
  if (auto it = find_iteration_stragglers(rows); !it.empty()) analysis["iteration_stragglers"] = iteration_stragglers_json(it);
  return analysis;
}

}  // namespace gpuscale
