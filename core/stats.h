#pragma once
// Repetition statistics: every measurement keeps median, min, max, mean and sample stddev of its
// repetitions (after warm-up), so compare can tell a regression from noise.
#include <cstddef>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gpuscale {

struct RepStats {
  std::size_t n = 0;
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0;
};

RepStats compute_stats(std::vector<double> values);  // empty input -> n == 0, zeros
double median_of(std::vector<double> values);        // 0 for an empty input
void to_json(nlohmann::json& j, const RepStats& s);
void from_json(const nlohmann::json& j, RepStats& s);

}  // namespace gpuscale
