#pragma once
// Loads the CUDA backend's module when a command needs it: first the libraries it links (cudart,
// cuBLASLt, NCCL; found as cuda_library_plan.h says and loaded by absolute path, RTLD_GLOBAL, so the
// module's own dependencies resolve to them), then the module (cuda_module.h). Once per process.
// In a build without CUDA every call says so.
#include <string>
#include <vector>

#include "backends/cuda_module/cuda_module.h"

namespace gpuscale {

struct CudaLibraryStatus {
  std::string soname;
  std::string what;     // "the CUDA runtime"
  bool loaded = false;
  std::string path;     // the file loaded
  std::string version;  // "13.0", "" when the library does not say
  std::string problem;  // why not loaded: "not found in ..." or the loader's error
};

struct CudaModuleLoad {
  const GpuscaleCudaModule* module = nullptr;  // null: `why_not` says why, in one line
  std::string why_not;
  std::string module_path;
  std::vector<CudaLibraryStatus> libraries;
};

const CudaModuleLoad& load_cuda_module();

// The module, or null with the reason (one line naming the missing library, or the module's problem).
const GpuscaleCudaModule* cuda_module(std::string* why_not);

// One line per library and one for the module, for gpuscale --version (empty without CUDA).
std::vector<std::string> cuda_module_report();

}  // namespace gpuscale
