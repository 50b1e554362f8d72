// The library's handle, version and status texts (cublasLt.h: cublasLtCreate .. cublasLtGetVersion).
#include <new>

#include "tests/emulated_gpu/core/emu_core.h"
#include "tests/emulated_gpu/cublaslt/lt_objects.h"

using namespace gpuscale_emu::lt;

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  // cuBLAS documentation, cublasStatus_t: CUBLAS_STATUS_NOT_INITIALIZED "usually ... an error in the
  // CUDA Runtime API called by the cuBLAS routine, or an error in the hardware setup": no device.
  if (gpuscale_emu::device_count() <= 0) return CUBLAS_STATUS_NOT_INITIALIZED;
  auto* h = new (std::nothrow) Handle;
  if (h == nullptr) return CUBLAS_STATUS_ALLOC_FAILED;
  *handle = reinterpret_cast<cublasLtHandle_t>(h);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete of(handle);
  return CUBLAS_STATUS_SUCCESS;
}

// The headers' own version (cublas_api.h: CUBLAS_VERSION, major*10000 + minor*100 + patch), so the
// emulation reports the library the module was compiled against.
size_t cublasLtGetVersion(void) { return CUBLAS_VERSION; }

const char* cublasLtGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

// The meanings the cuBLAS documentation gives each value (section "cublasStatus_t").
const char* cublasLtGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "the operation completed successfully";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
    case CUBLAS_STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR: return "an error was detected when checking the current licensing";
  }
  return "an unknown status";
}

}  // extern "C"
