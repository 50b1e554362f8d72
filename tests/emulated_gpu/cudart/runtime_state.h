#pragma once
// The emulated runtime's own state (tests only): the thread's last error, events, the kernels nvcc
// registered, the <<<>>> configurations pushed. The node, streams and memory are the core's
// (core/emu_core.h), shared with the emulated cuBLASLt and NCCL.
#include <cuda_runtime_api.h>

#include <string>

#include "tests/emulated_gpu/core/emu_core.h"

// Every exported runtime entry point: C linkage, and the version libcudart.so.13 in libcudart.map.
#define EMU_CUDART_API extern "C" __attribute__((visibility("default")))

namespace gpuscale_emu::cudart {

// What a runtime call returns. CUDA Runtime API, cudaGetLastError: "Returns the last error that has
// been produced by any of the runtime calls in the same instance of the CUDA Runtime library in the
// host thread"; an error is recorded as the thread's last error. A sticky error (emu_core.h) wins over
// every answer: "any subsequent API call to the CUDA runtime will return the same error" (CUDA Runtime
// API, "Error Handling", cudaErrorIllegalAddress's note in driver_types.h).
cudaError_t result(cudaError_t rc);
// The sticky error as a cudaError_t, or cudaSuccess.
cudaError_t sticky();
// Reads and clears the thread's last error (cudaGetLastError); a sticky error is returned, not cleared.
cudaError_t take_last_error();

// A cudaEvent_t's object.
struct Event {
  int device = 0;
  bool recorded = false;
  double time_us = 0;  // the simulated time its stream reached it
  bool timing = true;  // false with cudaEventDisableTiming
};

// A registered kernel (cudaKernel_t points at one): nvcc's host stub and the device name.
struct Kernel {
  const void* host_fun = nullptr;
  std::string device_name;  // mangled, as __cudaRegisterFunction's deviceFun
};
// Records hostFun -> deviceFun (__cudaRegisterFunction).
void register_kernel(const void* host_fun, const char* device_name);
// The kernel registered for hostFun, or nullptr.
const Kernel* kernel_of(const void* host_fun);

// The stream a handle names on its device (nullptr: the current device's legacy stream).
gpuscale_emu::Stream* stream(cudaStream_t s);
// Whether the current device is valid (there are devices and the ordinal is in range).
bool have_device();

}  // namespace gpuscale_emu::cudart
