#pragma once
// Test-only fault switch. GPUSCALE_TEST_FAULT holds a comma-separated list of faults to inject, e.g.
// "wrong:stream.triad" (the kernel really writes a wrong value, which verification must catch) or
// "fail:gemm" (the benchmark throws before measuring, as a CUDA or MPI error would).
// Tests use it to prove that a wrong result is reported as wrong; it is never set in production and
// every run records its value in the result file's top-level "test_fault" field.
#include <string_view>

namespace gpuscale {

inline constexpr const char* kFaultEnv = "GPUSCALE_TEST_FAULT";

// True when GPUSCALE_TEST_FAULT lists `fault` ("kind:target", e.g. "wrong:stream.triad").
bool fault_injected(std::string_view fault);

}  // namespace gpuscale
