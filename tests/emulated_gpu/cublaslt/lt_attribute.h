#pragma once
// The one rule every cublasLt*SetAttribute / GetAttribute shares (cublasLt.h, e.g. on
// cublasLtMatmulDescSetAttribute: "CUBLAS_STATUS_INVALID_VALUE if buf is NULL or sizeInBytes doesn't
// match size of internal storage for selected attribute"; on the Get functions: "if sizeInBytes is 0
// and sizeWritten is NULL, or if sizeInBytes is non-zero and buf is NULL or sizeInBytes doesn't match
// ... ; sizeWritten ... if sizeInBytes is 0: number of bytes needed to write full contents").
#include <cstddef>
#include <cstring>

#include <cublasLt.h>

namespace gpuscale_emu::lt {

// Where an attribute lives in a descriptor and its size (the type cublasLt.h states for it).
struct AttributeSlot {
  void* field = nullptr;  // nullptr: an attribute the emulation does not hold
  std::size_t size = 0;
};

template <typename T>
AttributeSlot slot(T& field) {
  return {&field, sizeof(T)};
}

inline cublasStatus_t set_attribute(const AttributeSlot& s, const void* buf, std::size_t size) {
  // An attribute the emulation does not model: refused as unsupported rather than silently ignored.
  if (s.field == nullptr) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (buf == nullptr || size != s.size) return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(s.field, buf, size);
  return CUBLAS_STATUS_SUCCESS;
}

inline cublasStatus_t get_attribute(const AttributeSlot& s, void* buf, std::size_t size, std::size_t* written) {
  if (s.field == nullptr) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (size == 0) {
    if (written == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *written = s.size;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (buf == nullptr || size != s.size) return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(buf, s.field, size);
  if (written != nullptr) *written = size;
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace gpuscale_emu::lt
