#include "health/nvml/nvml_library.h"

#include <dlfcn.h>

#include <cstdlib>

#include <fmt/format.h>

namespace gpuscale::health {

using namespace nvml;

std::string nvml_error_name(nvmlReturn_t rc) {
  static const struct {
    nvmlReturn_t rc;
    const char* name;
  } kNames[] = {
      {NVML_SUCCESS, "NVML_SUCCESS"},
      {NVML_ERROR_UNINITIALIZED, "NVML_ERROR_UNINITIALIZED"},
      {NVML_ERROR_INVALID_ARGUMENT, "NVML_ERROR_INVALID_ARGUMENT"},
      {NVML_ERROR_NOT_SUPPORTED, "NVML_ERROR_NOT_SUPPORTED"},
      {NVML_ERROR_NO_PERMISSION, "NVML_ERROR_NO_PERMISSION"},
      {NVML_ERROR_NOT_FOUND, "NVML_ERROR_NOT_FOUND"},
      {NVML_ERROR_INSUFFICIENT_SIZE, "NVML_ERROR_INSUFFICIENT_SIZE"},
      {NVML_ERROR_DRIVER_NOT_LOADED, "NVML_ERROR_DRIVER_NOT_LOADED: the NVIDIA driver is not loaded"},
      {NVML_ERROR_TIMEOUT, "NVML_ERROR_TIMEOUT"},
      {NVML_ERROR_LIBRARY_NOT_FOUND, "NVML_ERROR_LIBRARY_NOT_FOUND"},
      {NVML_ERROR_FUNCTION_NOT_FOUND, "NVML_ERROR_FUNCTION_NOT_FOUND"},
      {NVML_ERROR_GPU_IS_LOST, "NVML_ERROR_GPU_IS_LOST: the GPU has fallen off the bus or is otherwise inaccessible"},
      {NVML_ERROR_RESET_REQUIRED, "NVML_ERROR_RESET_REQUIRED: the GPU needs a reset"},
      {NVML_ERROR_LIB_RM_VERSION_MISMATCH,
       "NVML_ERROR_LIB_RM_VERSION_MISMATCH: the NVML library and the kernel driver differ in version"},
      {NVML_ERROR_GPU_NOT_FOUND, "NVML_ERROR_GPU_NOT_FOUND"},
      {NVML_ERROR_UNKNOWN, "NVML_ERROR_UNKNOWN"},
  };
  for (const auto& n : kNames)
    if (n.rc == rc) return fmt::format("{} ({})", n.name, rc);
  return fmt::format("NVML error {}", rc);
}

std::shared_ptr<const NvmlLibrary> NvmlLibrary::open(const std::string& path) {
  std::shared_ptr<NvmlLibrary> lib(new NvmlLibrary());
  const char* env = std::getenv(kNvmlLibraryEnv);
  lib->path_ = !path.empty() ? path : (env && *env) ? env : kNvmlDefaultLibrary;
  dlerror();
  lib->handle_ = dlopen(lib->path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle_) {
    const char* err = dlerror();
    lib->why_ = fmt::format("NVML library {} cannot be loaded ({})", lib->path_, err ? err : "dlopen failed");
    return lib;
  }
#define GPUSCALE_NVML_LOOKUP(name, params)                                                  \
  lib->api_.name = reinterpret_cast<decltype(lib->api_.name)>(dlsym(lib->handle_, #name)); \
  if (!lib->api_.name) lib->missing_.emplace_back(#name);
  GPUSCALE_NVML_FUNCTIONS(GPUSCALE_NVML_LOOKUP)
#undef GPUSCALE_NVML_LOOKUP
  if (!lib->api_.nvmlInit_v2) {
    lib->why_ = fmt::format("{} has no nvmlInit_v2: not a usable NVML library", lib->path_);
    return lib;
  }
  lib->init_rc_ = lib->api_.nvmlInit_v2();
  if (lib->init_rc_ != NVML_SUCCESS) {
    lib->why_ = fmt::format("nvmlInit_v2 failed: {}", nvml_error_name(lib->init_rc_));
    return lib;
  }
  lib->available_ = true;
  return lib;
}

NvmlLibrary::~NvmlLibrary() {
  // The library stays mapped (no dlclose): the driver's library may keep threads of its own, and it
  // costs nothing to keep for the life of the process.
  if (available_ && api_.nvmlShutdown) api_.nvmlShutdown();
}

}  // namespace gpuscale::health
