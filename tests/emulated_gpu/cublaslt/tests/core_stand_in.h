#pragma once
// TEST STAND-IN for the emulated node's core (tests/emulated_gpu/core/emu_core.h), which another part
// implements: only the functions the emulated cuBLASLt calls, over one device whose model a test sets,
// and an enqueue that runs the work at once and records each operation.
#include <vector>

#include "tests/emulated_gpu/core/emu_core.h"

namespace stand_in {

// Back to one H100-like device (cc 9.0, 132 SMs, the peaks below), no sticky error, no operations.
void reset();
void set_compute_capability(int major, int minor);
void set_sticky_error(int e);

struct Recorded {
  std::string what;
  double duration_us;
  bool repeatable_result;
};
const std::vector<Recorded>& operations();

// The stand-in model's figures, for tests that compute an expected duration themselves.
inline constexpr double kBf16Tflops = 989.5, kFp32Tflops = 67, kGemmEfficiency = 0.8;

}  // namespace stand_in
