#pragma once
// What the history subcommands print (cli/cmd_history.cpp): the runs, a trend, the regressions, an
// export. Text for people, JSON and CSV for scripts.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "history/trend.h"

namespace gpuscale::history {

std::string runs_text(const std::vector<RunSummary>& runs);
// Each series with its points: value, noise band, a rolling baseline (the median of the k points before
// it: baseline_before; the regressions' own baseline is the segment before a step) and the software
// that changed at it.
std::string trend_text(const std::vector<Series>& series, std::size_t k);
nlohmann::json trend_json(const std::vector<Series>& series, std::size_t k);
std::string regressions_text(const std::vector<Regression>& regs, std::size_t series_checked);
nlohmann::json regressions_json(const std::vector<Regression>& regs);
// The runs and every row of theirs.
nlohmann::json export_json(const std::vector<RunSummary>& runs, const std::vector<RowPoint>& rows);
std::string export_csv(const std::vector<RowPoint>& rows);

}  // namespace gpuscale::history
