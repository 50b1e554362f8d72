#pragma once
// gpuscale report --history URL: the history's part of the HTML report (docs/history.md, "Report"):
// per cluster and row, a chart of value over date (one line per GPU count, its baseline band dashed,
// the runs where software changed marked) and the "what changed" table: each run's software changes
// against its cluster's previous run and the regressions that start at it.
#include <string>

#include "history/history_store.h"
#include "history/trend.h"

namespace gpuscale::history {

struct HistoryReport {
  std::string html;  // a <section> for the HTML report
  std::string text;  // the "what changed" table and the regressions, for the terminal
  std::size_t charts = 0, regressions = 0;
};
// Throws gpuscale::Error (exit 2) when the store holds no runs.
HistoryReport history_report(HistoryStore& store, const RegressionRules& rules);

}  // namespace gpuscale::history
