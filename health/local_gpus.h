#pragma once
// What `gpuscale health` needs from a GPU backend to run its short bandwidth and GEMM checks on every
// GPU of the node from one process: the GPUs it can open (by UUID, to match NVML's), a device per GPU
// (kernels/device.h), the expected peaks (peaks/peaks.h) and the software versions (as
// Backend::software()). health/ only takes one (run_health_check); it never opens one, so it needs no
// backend: backends/local_gpus.h opens them (the CUDA backend's, backends/cuda/cuda_local_gpus.cpp, inside
// the CUDA module) and the caller (cli/cmd_health.cpp) hands them in. Without them the checks are NVML-only.
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

}  // namespace gpuscale::health
