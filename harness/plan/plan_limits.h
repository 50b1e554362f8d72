#pragma once
// Whether a plan is one the run can finish, decided before anything is measured: its estimated time
// against --max-time, and the repetition samples one rank keeps against its memory. `--reps 1000000000`
// was taken, printed nothing until its first point ended, then failed the row with std::bad_alloc.
// The decision is a pure function of plain numbers (unit-tested); the runner feeds it the plan's row
// weights (harness/run/progress.h) and prints the estimate at the start.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/options/options.h"

namespace gpuscale {

inline constexpr double kDefaultMaxTimeSeconds = 24 * 3600.0;
// The row weights are seconds at the watchdog's slow rates (harness/guard/watchdog.h), a tenth or less
// of a typical device's: over this factor they are what a typical device takes, at most.
inline constexpr double kTypicalOverSlowRates = 10;
// What a rank holds per timed repetition: its sample, and the sorted copy its statistics make.
inline constexpr std::uint64_t kBytesPerRepetition = 2 * sizeof(double);

struct PlanSize {
  double estimate_s = 0;  // on a typical device of the backend
  std::size_t rows = 0;   // rows to measure
  std::uint64_t reps = 0; // the most timed repetitions of one point (--reps), 0: the defaults (a few)
};

struct PlanLimits {
  double max_time_s = kDefaultMaxTimeSeconds;  // --max-time; 0: no limit
  std::uint64_t usable_memory = 0;             // one rank's (harness/plan/memory_plan.h); 0: unknown, not checked
};

// The plan's seconds on a typical device from its rows' weights (plan_row_weights).
double plan_estimate_seconds(const std::vector<double>& row_weights);

// One line for the start of the run: "the plan: 24 rows, estimated 3:05 on a typical device (--max-time 24:00:00)".
std::string plan_estimate_line(const PlanSize& size, const PlanLimits& limits);

// Why the plan is refused (one line naming the limit and what to change), or nullopt.
std::optional<std::string> plan_size_refusal(const PlanSize& size, const PlanLimits& limits);

// The run's check of `row_weights` (plan_row_weights) against `o`'s --max-time and --reps and one rank's
// usable memory: throws gpuscale::Error (exit 2) when the plan is refused; the estimate's line otherwise.
std::string check_plan_size(const std::vector<double>& row_weights, const RunOptions& o, std::uint64_t usable_memory);

}  // namespace gpuscale
