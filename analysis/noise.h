#pragma once
// What a row's number means for comparison: which direction is better (a property of the unit), and
// how far its repetitions spread (the noise band compare uses). docs/analysis.md states the rule.
#include <string_view>

#include "results/result_file.h"

namespace gpuscale {

enum class Better { higher, lower, unknown };
// GB/s, TFLOP/s, samples/s, ... are higher-is-better; us, ms, s lower-is-better; anything else unknown.
Better unit_direction(std::string_view unit);

// Relative repetition spread of a row's value: the row's value v may be as low as v x (1 - down) and
// as high as v x (1 + up), where over its measured ranks
//   down = max (median - min) / median,  up = max (max - median) / median
// from each rank's repetition statistics (0 when a rank has one repetition); when the ranks carry no
// statistics (a version-2 file written without --rank-stats), the row's "spread", which is the same
// figure written by the run.
struct NoiseBand {
  double down = 0, up = 0;
};
NoiseBand noise_band(const ResultRow& row);

}  // namespace gpuscale
