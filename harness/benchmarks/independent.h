#pragma once
// The timing loop every independent benchmark shares: warm-up, then timed repetitions with the
// group's ranks released together (so k ranks really work at once), each converted to the unit.
#include <functional>

#include "core/fault_plan.h"
#include "harness/benchmark.h"

namespace gpuscale {

// `pass` runs one repetition and returns its seconds; `to_unit` turns seconds into the row's unit.
// `site` is what the pass loads (compute for GEMM, memory for STREAM and copies): a timing fault
// planted there (core/fault_plan.h) really spends its extra time in each timed repetition. With a
// `gate` (RunContext::gate), each timed repetition waits for its group's turn (harness/repetition_gate.h).
std::vector<double> time_independent(const Group& group, FaultSite site, int warmup, int reps,
                                     const std::function<double()>& pass, const std::function<double(double)>& to_unit,
                                     RepetitionGate* gate = nullptr);

// The same loop with `before_each` run before every timed repetition (time_independent: the group's
// barrier; a rank timing alone: nothing).
std::vector<double> time_repetitions(FaultSite site, int warmup, int reps, const std::function<double()>& pass,
                                     const std::function<double(double)>& to_unit,
                                     const std::function<void()>& before_each, RepetitionGate* gate = nullptr);

// Applies a verification result to a measurement (invalid with the check's detail when wrong > 0).
void apply_check(RankMeasurement& m, const CheckResult& check);

// The demand of a kernel point over `count` buffers of `bytes` each (STREAM's arrays, a copy's source
// and destination), every one touched on each pass: warm-up, timed and checked (harness/plan/memory_plan.h).
// `plural` names them in the message: "3 arrays of 4.00 GiB (...)".
PointDemand buffers_demand(int count, const char* plural, std::uint64_t bytes, const RunOptions& opts);

}  // namespace gpuscale
