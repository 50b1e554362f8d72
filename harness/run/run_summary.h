#pragma once
// The result file's `summary`: how many rows of each status, whether the run is complete and valid,
// its exit code and why it stopped early. Rewritten with every version of the file.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/result_file.h"

namespace gpuscale {

// `complete`: the run ended normally (the exit code is known); `interrupted`: why it stopped early, or
// empty. The exit code is recorded once the run is complete or interrupted, null while it measures.
nlohmann::json summary_json(const std::vector<ResultRow>& rows, bool complete, int code, const std::string& interrupted);

// Valid: no row invalid or failed (ok and skipped rows are fine).
bool rows_valid(const std::vector<ResultRow>& rows);

}  // namespace gpuscale
