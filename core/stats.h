#pragma once
// Repetition statistics: every measurement keeps median, min, max, mean and sample stddev of its
// repetitions (after warm-up), and the median's confidence bounds, so compare can tell a regression
// from noise.
#include <cstddef>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gpuscale {

struct RepStats {
  std::size_t n = 0;
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0;
  // The distribution-free confidence interval of the median: the k-th smallest and k-th largest
  // repetition, k = median_bound_order(n). min and max below 6 repetitions.
  double lo = 0, hi = 0;
};

// The order k of the median's bounds [x(k), x(n+1-k)] over n sorted repetitions: the largest k whose
// interval holds the true median with at least 95% confidence, 1 - 2 P(Binomial(n, 1/2) < k) (the
// chance that k or more repetitions fall on each side). 1 (min and max) when n < 6, where even they are
// below 95%: 2 at 10 repetitions (97.9%), 6 at 20 (95.9%).
std::size_t median_bound_order(std::size_t n);
double median_bound_confidence(std::size_t n);  // of the interval median_bound_order gives; 0 below 2

RepStats compute_stats(std::vector<double> values);  // empty input -> n == 0, zeros
double median_of(std::vector<double> values);        // 0 for an empty input
void to_json(nlohmann::json& j, const RepStats& s);
void from_json(const nlohmann::json& j, RepStats& s);

}  // namespace gpuscale
