#pragma once
// The result file's "analysis" object (docs/results.md), whole and from one place: `gpuscale run` calls
// run_analysis once at the end of a run and writes what it returns, adding nothing to it. Its parts:
//   - the stragglers of independent rows (analysis/stragglers.h: straggler_threshold, straggler_rule,
//     stragglers);
//   - the outliers of the groups, node pairs, rails and GPU pairs (analysis/fleet_outliers.h: outliers,
//     outlier_hosts, outlier_rule);
//   - a burn-in's drift (analysis/burn_drift.h: burn, sdc, capacity), its sustained outliers appended to
//     the outliers, and the hosts of those and of its silent data corruption added to outlier_hosts, as a
//     slow GPU of a fleet run names its host. No burn-in: none of these three keys.
//   - the collectives' per-iteration stragglers (analysis/iteration_stragglers.h: iteration_stragglers),
//     only when a row's per-iteration pass named one.
// Pure: the document's rank identities and the rows in, the object out.
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/outliers.h"
#include "analysis/stragglers.h"
#include "results/result_file.h"

namespace gpuscale {

struct AnalysisRules {
  // How far below the median of a row's ranks a straggler is; a run keeps the default (docs/analysis.md).
  double straggler_threshold = kDefaultStragglerThreshold;
  // The fleet outliers' rule (--outlier, --min-effect, --false-alarm).
  OutlierRule outlier;
  // The burn-in's sustained outliers keep a fixed floor: --outlier where given, else this (their
  // populations, windows of one rank's time, are not yet judged by their noise; docs/burn-in.md).
  static constexpr double kBurnFraction = 0.10;
  double burn_fraction() const { return outlier.fraction > 0 ? outlier.fraction : kBurnFraction; }
};

// `doc`: the result document (its "ranks", the rank identities that name each GPU; the rows are
// `rows`, not its "results").
nlohmann::json run_analysis(const nlohmann::json& doc, const std::vector<ResultRow>& rows, const AnalysisRules& rules);

}  // namespace gpuscale
