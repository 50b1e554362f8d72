#pragma once
// What a row's number means for comparison: which direction is better (a property of the unit), how far
// its repetitions let its median move (a confidence interval), and the interval of the change from one
// row to another that follows. docs/analysis.md ("The noise rule") states the rule.
#include <cstddef>
#include <string_view>

#include "results/result_file.h"

namespace gpuscale {

enum class Better { higher, lower, unknown };
// GB/s, TFLOP/s, samples/s, ... are higher-is-better; us, ms, s lower-is-better; anything else unknown.
Better unit_direction(std::string_view unit);

// The confidence interval of a row's median from its repetitions: the row's value v lies in
// [v (1 - down), v (1 + up)], where over its measured ranks
//   down = max (median - lo) / median,  up = max (hi - median) / median
// from each rank's repetition statistics; when the ranks carry no statistics (a version-2 file written
// without --rank-stats), the row's "spread", which is the same figure written by the run. Per rank,
// [lo, hi] is the distribution-free order-statistic interval of the median: the k-th smallest and k-th
// largest of n repetitions, k the largest whose confidence 1 - 2 P(Binomial(n, 1/2) < k) is at least
// 95% (core/stats.h: the 2nd and 9th of 10, 97.9%; min and max below 6, 93.8% at 5, none at 1). Files
// written before the bounds were kept give min and max, a wider band. A sum of ranks' medians lies
// between the sums of their bounds, inside the widest relative band; a collective's bandwidth moves
// with its time the same way.
struct NoiseBand {
  double down = 0, up = 0;
  std::size_t reps = 0;  // repetitions behind it (the most over the ranks); 0: the file kept none
  bool known() const { return reps >= 2; }
};
NoiseBand noise_band(const ResultRow& row);
double median_interval_confidence(std::size_t reps);  // median_bound_confidence (core/stats.h)

// The change from A to B as a goodness ratio g (> 1: B is better): B/A for higher-is-better units, A/B
// for lower-is-better, and the interval [lo, hi] of g when each side's median may lie anywhere in its
// band (the bounds combined at their extremes; hi is infinite when a band reaches down to 0). Without a
// noise estimate on either side (fewer than 2 repetitions) lo = hi = g and noise_known is false.
struct Change {
  double ratio = 1, lo = 1, hi = 1;
  bool noise_known = false;
};
// a, b > 0 and dir known.
Change change_of(Better dir, double a, double b, const NoiseBand& na, const NoiseBand& nb);

}  // namespace gpuscale
