#pragma once
// Test-only fault switch. GPUSCALE_TEST_FAULT holds a comma-separated list of faults to inject, e.g.
// "wrong:stream.triad" (the kernel really writes a wrong value, which verification must catch),
// "fail:gemm" (the benchmark throws before measuring, as a CUDA or MPI error would) or
// "stall:all_reduce@2" (world rank 2 hangs in its own work when it measures all_reduce, as a stuck
// kernel would: the watchdog must catch it) or "setup-fail:stream.copy@1" (world rank 1's setup of
// stream.copy fails, as a failed buffer reservation would: the group fails the row on every rank
// and goes on).
// Tests use it to prove that a wrong result is reported as wrong; it is never set in production and
// every run records its value in the result file's top-level "test_fault" field.
#include <string_view>

namespace gpuscale {

inline constexpr const char* kFaultEnv = "GPUSCALE_TEST_FAULT";

// True when GPUSCALE_TEST_FAULT lists `fault` ("kind:target", e.g. "wrong:stream.triad").
bool fault_injected(std::string_view fault);

// Hangs the calling thread for good ("stall:" faults): only the watchdog or a signal ends the process.
[[noreturn]] void stall_for_test();

}  // namespace gpuscale
