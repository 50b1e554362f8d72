#pragma once
// Progress lines on stderr during long sweeps: what is being measured, done/total and an ETA. At most
// one line a second (plus the last), so logs stay readable.
//
// The ETA weighs the rows still to measure by their points' demand (harness/benchmark.h PointDemand:
// bytes, flops and setup at the backend's watchdog rates), scaled by how long the demand measured so far
// took: a plan that starts with heavy STREAM rows and ends with small collectives is not extrapolated
// from its first row's count.
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/benchmark.h"
#include "harness/options/options.h"

namespace gpuscale {

// Seconds per row beside its demand: synchronising the ranks and keeping the row (so a row of no
// measurable demand still counts).
inline constexpr double kProgressRowSeconds = 1e-3;

// One row's weight: its point's demand in nominal seconds at `backend`'s rates, plus kProgressRowSeconds.
double row_weight(const PointDemand& demand, const std::string& backend);

// Every row still to measure, in measuring order: row_weight() of its point, `rows(b)` times for a point
// of benchmark b (one row per GPU count it is measured at). Sequential tiling's groups, measured one
// after another, are not weighed apart: the ETA's scale from the time so far absorbs them.
std::vector<double> plan_row_weights(const nlohmann::json& points, const std::vector<bool>& kept,
                                     const DemandContext& ctx, const std::function<std::size_t(const Benchmark&)>& rows);

// Seconds left: the time so far per unit of weight done, times the weight left (0 before anything is done).
double eta_seconds(double elapsed_s, double done_weight, double left_weight);

class Progress {
 public:
  // `row_weights`: every row still to measure, in measuring order (row_weight()). When enabled, the plan's
  // estimate is said at once (harness/plan/plan_limits.h, plan_estimate_line, against `max_time_s`).
  Progress(std::vector<double> row_weights, bool enabled, double max_time_s);
  void step(const std::string& what);  // the next row finished

 private:
  std::vector<double> weights_;
  double done_weight_ = 0, total_weight_ = 0;
  std::size_t done_ = 0;
  bool enabled_;
  std::chrono::steady_clock::time_point start_, last_;
};

// Where `gpuscale run` prints what people read at the end (the summary, the results line): stdout; stderr
// when the result JSON goes to stdout (-o -); a null sink with --quiet. Errors and warnings always go
// to stderr. gpuscale writes no colour or other escape codes, on a terminal or not (NO_COLOR holds).
std::FILE* summary_stream(const RunOptions& o);


}  // namespace gpuscale
