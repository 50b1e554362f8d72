#pragma once
// Test-only fault switch. GPUSCALE_TEST_FAULT holds a comma-separated list of faults to inject, e.g.
// "wrong:stream.triad" (the kernel really writes a wrong value, which verification must catch),
// "fail:gemm" (the benchmark throws before measuring, as a CUDA or MPI error would) or
// "stall:all_reduce@2" (world rank 2 hangs in its own work when it measures all_reduce, as a stuck
// kernel would: the watchdog must catch it) or "slow-host:h3:2" (every timed measurement of the ranks
// on host h3 takes 2 times as long: the fleet analysis must name h3, and only h3, as the outlier) or
// "setup-fail:stream.copy@1" (world rank 1's setup of stream.copy fails, as a failed buffer
// reservation would: the group fails the row on every rank and goes on).
// Tests use it to prove that a wrong result is reported as wrong; it is never set in production and
// every run records its value in the result file's top-level "test_fault" field.
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale {

inline constexpr const char* kFaultEnv = "GPUSCALE_TEST_FAULT";

// True when GPUSCALE_TEST_FAULT lists `fault` ("kind:target", e.g. "wrong:stream.triad").
bool fault_injected(std::string_view fault);

// One "slow-host:NAME:FACTOR" item: NAME is a host name (core/host_name.h), FACTOR a finite number > 1.
struct SlowHost {
  std::string host;
  double factor = 1;
};

// The slow-host items of a fault list, in list order; other items are ignored. A malformed slow-host
// item (no name, a bad name, a factor that is not a number > 1, a host listed twice) throws
// gpuscale::Error (exit 2) naming GPUSCALE_TEST_FAULT and the item.
std::vector<SlowHost> parse_slow_hosts(std::string_view fault_list);

// How many times as long every timed measurement of a rank on `host` must take: the planted factor,
// or 1 when the list plants none for it. Throws as parse_slow_hosts does.
double slow_host_factor(std::string_view fault_list, std::string_view host);
// The same for GPUSCALE_TEST_FAULT (1 when unset).
double slow_host_factor(std::string_view host);

// The planted slowdown of this process: the run sets it once, from slow_host_factor of the host its
// rank acts as (world/test_hosts.h), before anything is timed. 1 (the default) plants nothing.
void plant_slowdown(double factor);
double planted_slowdown();
// One timed measurement of `seconds` under the planted slowdown: `factor` times `seconds` is returned
// (reported, not slept: see fault.cpp), so the rank's figure is exactly `factor` times worse than its
// own timing under the load everyone shares. Without a planted slowdown: `seconds`.
double stretch_timed(double seconds);

// Hangs the calling thread for good ("stall:" faults): only the watchdog or a signal ends the process.
[[noreturn]] void stall_for_test();

}  // namespace gpuscale
