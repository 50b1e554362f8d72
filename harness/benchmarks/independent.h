#pragma once
// The timing loop every independent benchmark shares: warm-up, then timed repetitions with the
// group's ranks released together (so k ranks really work at once), each converted to the unit.
#include <functional>

#include "harness/benchmark.h"

namespace gpuscale {

// `pass` runs one repetition and returns its seconds; `to_unit` turns seconds into the row's unit.
std::vector<double> time_independent(const Group& group, int warmup, int reps, const std::function<double()>& pass,
                                     const std::function<double(double)>& to_unit);

// Applies a verification result to a measurement (invalid with the check's detail when wrong > 0).
void apply_check(RankMeasurement& m, const CheckResult& check);

}  // namespace gpuscale
