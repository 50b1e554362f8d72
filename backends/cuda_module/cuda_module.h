#pragma once
// The CUDA backend as a module loaded at run time (libgpuscale-cuda.so), so one gpuscale binary runs the
// CPU backend on nodes without any CUDA library. The module holds everything that needs cudart,
// cuBLASLt or NCCL (the CUDA device, kernels, the NCCL transport, the CUDA dp-step, health's CUDA GPUs);
// the executable exports the rest of gpuscale (-rdynamic), so the registry, the activity state and the
// other globals exist once. Both are built by the same compiler from the same tree: the C++ types in
// this table are gpuscale's own, and `build` must match the executable's (cuda_loader.cpp checks).
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace gpuscale {

class Backend;
class World;
struct BackendOptions;
namespace health {
class LocalGpus;
}

struct GpuscaleCudaModule {
  const char* build;  // gpuscale version, commit and compiler the module was built with
  // GPUs this process can use (0 with the reason when none): backend.h's cuda_visible_devices.
  int (*visible_devices)(std::string* why_none);
  std::unique_ptr<Backend> (*make_backend)(const World& world, const BackendOptions& opts);
  // backends/local_gpus.h's open_local_gpus over the CUDA device.
  std::unique_ptr<health::LocalGpus> (*open_local_gpus)(const std::string& peaks_file, std::string* why_none);
  // The CUDA runtime, cuBLASLt and NCCL versions the module runs with, and the driver's (no GPU needed).
  nlohmann::json (*software)();
};

// The build identity both sides compare.
#define GPUSCALE_CUDA_MODULE_BUILD GPUSCALE_VERSION " " GPUSCALE_GIT_COMMIT " " __VERSION__

}  // namespace gpuscale

// The module's one exported symbol.
extern "C" const gpuscale::GpuscaleCudaModule* gpuscale_cuda_module_v1();
inline constexpr const char* kGpuscaleCudaModuleEntry = "gpuscale_cuda_module_v1";
