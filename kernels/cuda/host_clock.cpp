#include "kernels/cuda/host_clock.h"

#include <dlfcn.h>

#include <chrono>

namespace gpuscale::cuda {
namespace {

using EmulatedClock = double (*)();

// The loader opens the CUDA runtime with RTLD_GLOBAL (backends/cuda_module/cuda_loader.cpp), so a
// symbol of the runtime is found by name; a real libcudart has none of this name.
EmulatedClock emulated_clock() {
  static const auto clock = reinterpret_cast<EmulatedClock>(dlsym(RTLD_DEFAULT, "gpuscale_emulated_host_clock_us"));
  return clock;
}

}  // namespace

double host_clock_s() {
  if (const EmulatedClock c = emulated_clock()) return c() * 1e-6;
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace gpuscale::cuda
