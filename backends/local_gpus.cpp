// `gpuscale health`'s GPUs come from the CUDA backend's module (backends/cuda_module) when it loads;
// without it (a build without CUDA, or a node without the CUDA libraries) the checks are NVML-only.
#include "backends/local_gpus.h"

#include "backends/cuda_module/cuda_loader.h"

namespace gpuscale {

std::unique_ptr<health::LocalGpus> open_local_gpus(const std::string& peaks_file, std::string* why_none) {
  std::string why;
  const auto* module = cuda_module(&why);
  if (!module) {
    *why_none = why;
    return nullptr;
  }
  return module->open_local_gpus(peaks_file, why_none);
}

}  // namespace gpuscale
