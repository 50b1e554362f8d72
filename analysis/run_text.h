#pragma once
// The end-of-run summary `gpuscale run` prints (rank 0, when the result file is written): the verdict
// (analysis/verdict.h), then the tables and nccl-tests tables of the rows, then the invalid or failed measurements, GPU health, the stragglers
// and the fleet's outliers that the file's "analysis" section lists, and where the file is. The same
// sections, in the same words, as `gpuscale report` prints for that file, every line within `width`
// (0: no limit) apart from the nccl-tests tables.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/result_file.h"

namespace gpuscale {

// `doc` is the result document as written (backend, health, analysis, ranks); `results_path` the file.
std::string run_summary_text(const nlohmann::json& doc, const std::vector<ResultRow>& rows,
                             const std::string& results_path, std::size_t width);

}  // namespace gpuscale
