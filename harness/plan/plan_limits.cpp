#include "harness/plan/plan_limits.h"

#include <cmath>
#include <cstdlib>
#include <numeric>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "core/units.h"
#include "text/number_text.h"

namespace gpuscale {

double plan_estimate_seconds(const std::vector<double>& row_weights) {
  return std::accumulate(row_weights.begin(), row_weights.end(), 0.0) / kTypicalOverSlowRates;
}

namespace {

// format_duration's "1:02:03", and days beyond a day (a refused plan may be estimated at years).
std::string duration_text(double s) {
  if (!std::isfinite(s) || s >= 1e15) return "more than 10^15 s";
  if (s <= 86400) return format_duration(s);
  return fmt::format("{:.0f} days", s / 86400);
}

std::string limit_text(double max_time_s) { return max_time_s > 0 ? duration_text(max_time_s) : "no limit"; }

}  // namespace

std::string plan_estimate_line(const PlanSize& size, const PlanLimits& limits) {
  return fmt::format("the plan: {} rows, estimated {} on a typical device (--max-time {})", size.rows,
                     duration_text(size.estimate_s), limit_text(limits.max_time_s));
}

std::optional<std::string> plan_size_refusal(const PlanSize& size, const PlanLimits& limits) {
  if (limits.max_time_s > 0 && !(size.estimate_s <= limits.max_time_s))
    return fmt::format("the plan's {} rows are estimated at {} on a typical device, more than --max-time {}: "
                       "measure less (--reps, --benchmarks, sizes) or raise --max-time (0 = no limit)",
                       size.rows, duration_text(size.estimate_s), limit_text(limits.max_time_s));
  const std::uint64_t samples = saturating_mul(size.reps, kBytesPerRepetition);
  if (limits.usable_memory > 0 && samples > limits.usable_memory)
    return fmt::format("--reps {}: each rank keeps {} of repetition samples, more than its {} of memory: "
                       "ask for fewer repetitions",
                       size.reps, format_bytes(samples), format_bytes(limits.usable_memory));
  return std::nullopt;
}

std::string check_plan_size(const std::vector<double>& row_weights, const RunOptions& o, std::uint64_t usable_memory) {
  const PlanSize size{plan_estimate_seconds(row_weights), row_weights.size(), static_cast<std::uint64_t>(o.reps.value_or(0))};
  const PlanLimits limits{o.max_time_s, usable_memory};
  if (const auto why = plan_size_refusal(size, limits)) throw Error(*why);
  return plan_estimate_line(size, limits);
}

}  // namespace gpuscale
