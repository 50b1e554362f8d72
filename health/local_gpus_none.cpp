// Builds without a GPU backend: `gpuscale health` checks what NVML reports, with no bandwidth or GEMM run.
#include "health/local_gpus.h"

namespace gpuscale::health {

std::unique_ptr<LocalGpus> open_local_gpus(const std::string& peaks_file, std::string* why_none) {
  (void)peaks_file;
  *why_none = "this gpuscale has no CUDA backend (built without CUDA)";
  return nullptr;
}

}  // namespace gpuscale::health
