#pragma once
// The CUDA backend's device: STREAM kernels and copies timed with CUDA events, GEMM through cuBLASLt.
// One process drives one GPU (its ordinal is chosen by the backend's binding, backends/cuda).
// No CUDA header here, so the backend and gpuscale-kernels include it freely.
#include <memory>
#include <string>
#include <vector>

#include "kernels/device.h"

namespace gpuscale {

struct CudaDeviceOptions {
  int ordinal = 0;      // CUDA ordinal in this process
  std::string binding;  // how the ordinal was chosen (recorded in the device details)
};

// Opens the GPU (creates its context). Throws gpuscale::Error: kExitNoDevice when this build has no
// code for the GPU, otherwise the failing call's one-line error.
std::unique_ptr<Device> make_cuda_device(const CudaDeviceOptions& opts);

// GPUs this process can use; 0 with the CUDA runtime's reason when none (no driver, no GPU, hidden).
int cuda_device_count(std::string* why_none);
// "GPU-..." UUID of every GPU this process sees, in ordinal order.
std::vector<std::string> cuda_device_uuids();

struct CudaVersions {
  std::string driver;    // highest CUDA version the driver supports, "13.0"
  std::string runtime;   // CUDA runtime linked, "13.0"
  std::string cublaslt;  // "13.0.0"
};
CudaVersions cuda_versions();

}  // namespace gpuscale
