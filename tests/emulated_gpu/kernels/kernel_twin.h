#pragma once
// The project's own CUDA kernels, run on the host (tests only). nvcc registers each kernel with the
// runtime under its mangled device name (__cudaRegisterFunction's deviceFun); the emulated runtime
// looks that name up here and runs the host twin: the same kernel source compiled for the host, or a
// hand-written twin where the kernel synchronises a block (__syncthreads, warp shuffles).
#include <cstddef>
#include <vector>

#include "tests/emulated_gpu/core/emu_core.h"

namespace gpuscale_emu {

struct LaunchShape {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  std::size_t shared_bytes = 0;
};

struct KernelTwin {
  const char* name;  // the kernel's mangled name, as nvcc registers it
  // Runs every thread of every block on the host; args[i] points at the kernel's i-th parameter
  // (cudaLaunchKernel's contract: CUDA Runtime API, "Execution Control").
  void (*run)(const LaunchShape& shape, void** args);
  // The bytes of device memory the launch reads plus writes, from its arguments: the performance
  // model's cost of the kernel (core/cost.h turns bytes into time at the GPU's HBM bandwidth).
  double (*bytes_moved)(const LaunchShape& shape, void** args);
  // The device memory the launch writes, from its arguments, where a twin states it (the sample
  // gathers: their writes must not look like writes to the product they read, emu_core.h, "Writes to
  // device memory"); nullptr: it may write anywhere its arguments point.
  std::vector<WriteRange> (*writes)(const LaunchShape& shape, void** args) = nullptr;
  // The device memory it reads, where a twin states it (with `writes`): the runtime then charges the
  // bytes lying on another GPU at the link's bandwidth (core/cost.h, kernel_us).
  std::vector<WriteRange> (*reads)(const LaunchShape& shape, void** args) = nullptr;
};

// The twin of the kernel nvcc registered as `mangled_name`; nullptr when there is none (the runtime
// then fails the launch with cudaErrorInvalidDeviceFunction).
const KernelTwin* find_kernel_twin(const char* mangled_name);

// Every twin, in no particular order (tests hold the table to the module's kernels with it).
std::vector<const KernelTwin*> all_kernel_twins();

}  // namespace gpuscale_emu
