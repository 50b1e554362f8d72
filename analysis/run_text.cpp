#include "analysis/run_text.h"

#include <deque>

#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/burn_drift.h"
#include "analysis/fleet_outliers.h"
#include "analysis/health_text.h"
#include "analysis/iteration_stragglers.h"
#include "analysis/row_text.h"
#include "analysis/stragglers.h"
#include "analysis/verdict.h"

namespace gpuscale {

std::string run_summary_text(const nlohmann::json& doc, const std::vector<ResultRow>& rows,
                             const std::string& results_path, std::size_t width) {
  TextStyle style;
  style.width = width;
  style.device = device_word(doc.value("backend", std::string()));
  const auto& analysis = doc.contains("analysis") ? doc["analysis"] : nlohmann::json();
  const double threshold = analysis.is_object() && analysis.contains("straggler_threshold") &&
                                   analysis["straggler_threshold"].is_number()
                               ? analysis["straggler_threshold"].get<double>()
                               : kDefaultStragglerThreshold;
  // The rule of the file's own list (straggler_analysis), on the ranks' figures as the file holds them
  // (rounded when written), so the summary prints what `gpuscale report` prints for the file. One row
  // at a time: only rows that name a straggler are kept.
  std::deque<ResultRow> written;
  std::vector<Straggler> stragglers;
  for (const auto& r : rows) {
    if (r.scope != "independent" || r.status != RowStatus::ok || r.ranks.size() < 2) continue;
    written.push_back(nlohmann::json(r).get<ResultRow>());
    auto found = find_stragglers(doc, {written.back()}, threshold);
    if (found.empty()) {
      written.pop_back();
      continue;
    }
    for (auto& s : found) s.row = &written.back();
    stragglers.insert(stragglers.end(), found.begin(), found.end());
  }
  // The verdict first, then scaling (the tables), then the detail: as `gpuscale report` prints them.
  std::string out = fit_lines(format_verdict(run_verdict(doc, rows, stragglers.size())), width);
  out += format_summary(rows, style);
  out += fit_lines(format_health(doc.contains("health") ? doc["health"] : nlohmann::json(), rows), width);
  out += format_stragglers(stragglers, threshold, style);
  out += format_iteration_stragglers(find_iteration_stragglers(rows), style);
  if (analysis.is_object()) out += fit_lines(format_burn_drift(analysis) + format_fleet_outliers(analysis), width);
  out += fmt::format("\nresults: {}\n", term_text(results_path));  // a path is never broken: scripts grep it
  return out;
}

}  // namespace gpuscale
