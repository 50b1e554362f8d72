#pragma once
// The checks every reader applies to each converted row beyond the schema (analysis/result_set.h's
// loaders run them on every row), for a reader that keeps rows as JSON (--resume): figures (metrics,
// rank values, the aggregate) non-negative and finite, each rank listed once, an ok row listing at
// least its gpu_count ranks, gpu_count and ranks inside a world of `world_size`.
#include <cstddef>
#include <string>

#include "results/result_file.h"

namespace gpuscale {

// Throws gpuscale::Error("<label>: /results/<index>: <problem>").
void check_result_row(const std::string& label, const ResultRow& row, std::size_t index, int world_size);

}  // namespace gpuscale
