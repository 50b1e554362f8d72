#pragma once
// Loading NVML at run time: dlopen of the library the user names (--nvml-library, else the
// GPUSCALE_NVML_LIBRARY environment variable, else libnvidia-ml.so.1), dlsym of every entry point of
// nvml_api.h, then nvmlInit_v2. Nothing here throws: a missing library, a failed init or a missing
// symbol is recorded, and callers report telemetry as unavailable (or the field as unsupported).
#include <memory>
#include <string>
#include <vector>

#include "health/nvml/nvml_api.h"

namespace gpuscale::health {

inline constexpr const char* kNvmlLibraryEnv = "GPUSCALE_NVML_LIBRARY";
inline constexpr const char* kNvmlDefaultLibrary = "libnvidia-ml.so.1";

// "NVML_ERROR_NOT_SUPPORTED (3)", for messages.
std::string nvml_error_name(nvml::nvmlReturn_t rc);

class NvmlLibrary {
 public:
  // `path`: the --nvml-library flag ("" = the environment variable, else the default).
  static std::shared_ptr<const NvmlLibrary> open(const std::string& path);
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  bool available() const { return available_; }
  // Why NVML cannot be used: "cannot load libnvidia-ml.so.1: <dlerror>", "nvmlInit_v2 failed: ...".
  const std::string& why_unavailable() const { return why_; }
  // nvmlInit_v2's result (NVML_SUCCESS when it ran and succeeded; NVML_ERROR_LIBRARY_NOT_FOUND when
  // the library did not load). NVML_ERROR_LIB_RM_VERSION_MISMATCH is the container/host driver mismatch.
  nvml::nvmlReturn_t init_result() const { return init_rc_; }
  const std::string& path() const { return path_; }
  const nvml::Api& api() const { return api_; }
  const std::vector<std::string>& missing_symbols() const { return missing_; }

 private:
  NvmlLibrary() = default;
  std::string path_, why_;
  void* handle_ = nullptr;
  bool available_ = false;
  nvml::nvmlReturn_t init_rc_ = nvml::NVML_ERROR_LIBRARY_NOT_FOUND;
  nvml::Api api_;
  std::vector<std::string> missing_;
};

}  // namespace gpuscale::health
