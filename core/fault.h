#pragma once
// Test-only fault switch. GPUSCALE_TEST_FAULT holds a comma-separated list of faults to inject, e.g.
// "wrong:stream.triad" (the kernel really writes a wrong value, which verification must catch),
// "fail:gemm" (the benchmark throws before measuring, as a CUDA or MPI error would) or
// "stall:all_reduce@2" (world rank 2 hangs in its own work when it measures all_reduce, as a stuck
// kernel would: the watchdog must catch it) or a timing fault such as "slow-mem:h3:2" (every STREAM and
// copy pass of the ranks on host h3 really takes 2 times as long: the fleet analysis must name h3, and
// only h3, as the outlier; every kind in core/fault_kind_table.def) or "setup-fail:stream.copy@1" (world rank 1's setup of stream.copy fails, as a failed buffer
// reservation would: the group fails the row on every rank and goes on).
// Tests use it to prove that a wrong result is reported as wrong; it is never set in production and
// every run records its value in the result file's top-level "test_fault" field.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fault_plan.h"

namespace gpuscale {

inline constexpr const char* kFaultEnv = "GPUSCALE_TEST_FAULT";

// True when GPUSCALE_TEST_FAULT lists `fault` ("kind:target", e.g. "wrong:stream.triad").
bool fault_injected(std::string_view fault);

// The timing faults (core/fault_plan.h) of GPUSCALE_TEST_FAULT (none when unset), checked against the
// job's hosts (one per world rank); throws gpuscale::Error (exit 2) as parse_timing_faults and
// check_fault_places do.
std::vector<TimingFault> timing_faults_from_env(const std::vector<std::string>& hosts);

// The run plants the faults once, for the host and local index its rank acts as (world/test_hosts.h),
// before anything is timed; the clock of throttle-after starts here. Nothing planted: nothing is paid.
void plant_faults(const std::vector<TimingFault>& faults, const std::string& host, int local_index);

// One timed repetition of work at `place` (a driver opens it around each timed repetition): while it
// lives, spend_planted slows each site by the factor the planted faults give there (flaky items draw
// once per scope, from a sequence seeded by the host, so a host's ranks draw alike).
class FaultScope {
 public:
  explicit FaultScope(const WorkPlace& place);
  ~FaultScope();
  FaultScope(const FaultScope&) = delete;
  FaultScope& operator=(const FaultScope&) = delete;

 private:
  PlantedFactors saved_;
};

// Called right after `seconds` of timed work at `site`, inside the timed region: sleeps (factor - 1) x
// seconds under the open scope and returns the seconds it really slept (0 when nothing acts here).
// Spent, not reported: the rank's figure includes the time, and ranks waiting for it wait as long.
double spend_planted(FaultSite site, double seconds);
// Whether the open scope slows `site` at all (a transport whose operations are asynchronous waits for
// each one only then, so an unplanted run is timed as it always was).
bool planted_at(FaultSite site);

// flip-bit (core/fault_kind_table.def): asked once per burn-in window by a GEMM's output digest; a number to pick
// the element and bit from when a planted flip-bit item of this rank fires (its RATE), else nullopt.
std::optional<std::uint64_t> flip_bit_due();

// slow-host-reported: one timed figure of `seconds` multiplied by the host's factor (reported, not
// slept: exact numbers for tests that need them; nothing waits for it). Without it: `seconds`.
double stretch_timed(double seconds);

// Hangs the calling thread for good ("stall:" faults): only the watchdog or a signal ends the process.
[[noreturn]] void stall_for_test();

}  // namespace gpuscale
