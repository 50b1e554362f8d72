#pragma once
// What `gpuscale health` needs from a GPU backend to run its short bandwidth and GEMM checks on every
// GPU of the node from one process: the GPUs it can open (by UUID, to match NVML's), a device per GPU
// (kernels/device.h), the expected peaks (peaks/peaks.h) and the software versions (as
// Backend::software()). health/local_gpus_cuda.cpp implements it over the CUDA backend, inside the CUDA
// module (backends/cuda_module); without the module the checks are NVML-only.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "peaks/peaks.h"
#include "kernels/device.h"

namespace gpuscale::health {

class LocalGpus {
 public:
  virtual ~LocalGpus() = default;
  virtual std::vector<std::string> uuids() const = 0;  // "GPU-..." / "MIG-...", in ordinal order; may be empty
  virtual std::unique_ptr<Device> open(int ordinal) = 0;
  virtual const PeakTable* peaks() const = 0;          // may be null
  virtual nlohmann::json software() const = 0;         // {"driver", "cuda_runtime", "nccl", ...}
};

// The GPUs of this build's GPU backend: nullptr without one (`why_none` says so); with one but no GPU
// visible (no driver, a driver too old for the runtime, CUDA_VISIBLE_DEVICES), an object with no
// uuids() that still gives the runtime's versions, and `why_none` says why. `peaks_file` adds GPU
// models to the built-in peaks.
std::unique_ptr<LocalGpus> open_local_gpus(const std::string& peaks_file, std::string* why_none);
// The same over the CUDA device, in the CUDA module (open_local_gpus calls it through the module).
std::unique_ptr<LocalGpus> open_cuda_local_gpus(const std::string& peaks_file, std::string* why_none);

}  // namespace gpuscale::health
