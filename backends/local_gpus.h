#pragma once
// The GPUs `gpuscale health` checks (health/local_gpus.h's LocalGpus), opened by the backends, so that
// health/ never includes a backend: the caller opens them here and hands them to health::run_health_check.
#include <memory>
#include <string>

#include "health/local_gpus.h"

namespace gpuscale {

// The GPUs of this build's GPU backend: nullptr without one (`why_none` says so); with one but no GPU
// visible (no driver, a driver too old for the runtime, CUDA_VISIBLE_DEVICES), an object with no
// uuids() that still gives the runtime's versions, and `why_none` says why. `peaks_file` adds GPU
// models to the built-in peaks.
std::unique_ptr<health::LocalGpus> open_local_gpus(const std::string& peaks_file, std::string* why_none);
// The same over the CUDA device, in the CUDA module (backends/cuda/cuda_local_gpus.cpp; open_local_gpus
// calls it through the module).
std::unique_ptr<health::LocalGpus> open_cuda_local_gpus(const std::string& peaks_file, std::string* why_none);

}  // namespace gpuscale
