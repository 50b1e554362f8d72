// The CUDA module's entry point: the table of what the executable calls (cuda_module.h).
#include "backends/cuda_module/cuda_module.h"

#include "backends/backend.h"
#include "backends/local_gpus.h"
#include "collectives/nccl/nccl_comm.h"
#include "collectives/nccl/nccl_plan.h"
#include "gpuscale_version.h"
#include "kernels/cuda/cuda_device.h"

namespace {

nlohmann::json module_software() {
  const auto v = gpuscale::cuda_versions();
  return {{"driver", v.driver},
          {"cuda_runtime", v.runtime},
          {"cublaslt", v.cublaslt},
          {"nccl", gpuscale::nccl::version_text(gpuscale::nccl::runtime_version())}};
}

const gpuscale::GpuscaleCudaModule kModule = {
    GPUSCALE_CUDA_MODULE_BUILD,
    &gpuscale::cuda_visible_devices,
    &gpuscale::make_cuda_backend,
    &gpuscale::open_cuda_local_gpus,
    &module_software,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const gpuscale::GpuscaleCudaModule* gpuscale_cuda_module_v1() {
  return &kModule;
}
