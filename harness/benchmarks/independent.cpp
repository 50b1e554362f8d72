#include "harness/benchmarks/independent.h"

#include <optional>

#include <fmt/format.h>

#include "core/fault.h"
#include "core/step_progress.h"
#include "core/timed_span.h"
#include "core/units.h"
#include "harness/benchmarks/defaults.h"

namespace gpuscale {

std::vector<double> time_repetitions(FaultSite site, int warmup, int reps, const std::function<double()>& pass,
                                     const std::function<double(double)>& to_unit,
                                     const std::function<void()>& before_each, RepetitionGate* gate) {
  if (gate) gate->wait(0);  // the warm-up belongs to the first turn: nobody else is timing then
  // Each pass is a step of the rank's progress (core/step_progress.h): the watchdog judges those, so a slow
  // device's point runs to its end. The mark follows the pass's clock, outside its time.
  for (int i = 0; i < warmup; ++i) {
    pass();
    note_progress();
  }
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(reps));
  // The row's energy is read around these repetitions only (core/timed_span.h): around the whole loop,
  // or, when other groups take turns between them, around each repetition, so that their turns are
  // not counted as this one's.
  std::optional<TimedSpan> timed;
  if (!gate) timed.emplace();
  for (int i = 0; i < reps; ++i) {
    if (gate && i > 0) gate->wait(i);
    std::optional<TimedSpan> one;
    if (gate) one.emplace();
    before_each();
    const FaultScope planted(WorkPlace{});  // a planted fault's factor for this repetition (core/fault.h)
    const double t = pass();
    // The pass's own time, then the planted extra really slept (timed as the pass is: it is the
    // repetition's time), or multiplied under slow-host-reported. Nothing planted: the pass's time.
    out.push_back(to_unit(stretch_timed(t + spend_planted(site, t))));
    note_progress();
  }
  if (gate) gate->done();  // the driver's check comes after every group's turns
  return out;
}

std::vector<double> time_independent(const Group& group, FaultSite site, int warmup, int reps,
                                     const std::function<double()>& pass, const std::function<double(double)>& to_unit,
                                     RepetitionGate* gate) {
  return time_repetitions(site, warmup, reps, pass, to_unit, [&] { group.barrier(); }, gate);
}

void apply_check(RankMeasurement& m, const CheckResult& check) {
  m.metrics["checked"] = check.checked;
  m.metrics["wrong"] = check.wrong;
  if (check.wrong > 0) {
    m.valid = false;
    m.message = "verification failed: " + check.detail;
  }
}

PointDemand buffers_demand(int count, const char* plural, std::uint64_t bytes, const RunOptions& opts) {
  const auto m = kernel_methodology(opts);
  PointDemand d;
  d.memory_bytes = saturating_mul(bytes, static_cast<std::uint64_t>(count));
  d.memory_what = fmt::format("{} {} of {}", count, plural, format_bytes(bytes));
  d.bytes = count * static_cast<double>(bytes) * (m.warmup + m.reps + 1);
  return d;
}

}  // namespace gpuscale
