#pragma once
// The human-readable summary printed at the end of a run: per benchmark and parameter point, one line
// per GPU count with throughput, scaling efficiency, % of peak and validity. Collectives show their
// largest message size (every size is in the JSON).
#include <string>
#include <vector>

#include "results/result_file.h"

namespace gpuscale {

std::string format_summary(const std::vector<ResultRow>& rows);
// Short text for a parameter point: "fp64 1536M", "fp32 sum in-place", "bf16 8192x8192x8192:TN".
std::string params_label(const nlohmann::json& params, bool drop_size);

}  // namespace gpuscale
