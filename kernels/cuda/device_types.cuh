#pragma once
// Conversions between double and every storage type gpuscale's CUDA kernels fill and read (round to
// nearest; fp8 saturates to its finite range as the CUDA fp8 types do), and a switch from DType to
// the CUDA type, so kernels are written once as templates.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/dtype.h"

namespace gpuscale::cuda {

template <typename T>
__device__ inline T from_double(double v) {
  return static_cast<T>(v);
}
template <>
__device__ inline __nv_bfloat16 from_double<__nv_bfloat16>(double v) {
  return __double2bfloat16(v);
}
template <>
__device__ inline __half from_double<__half>(double v) {
  return __double2half(v);
}
template <>
__device__ inline __nv_fp8_e4m3 from_double<__nv_fp8_e4m3>(double v) {
  return __nv_fp8_e4m3(v);
}
template <>
__device__ inline __nv_fp8_e5m2 from_double<__nv_fp8_e5m2>(double v) {
  return __nv_fp8_e5m2(v);
}

template <typename T>
__device__ inline double to_double(T v) {
  return static_cast<double>(v);
}
template <>
__device__ inline double to_double<__nv_bfloat16>(__nv_bfloat16 v) {
  return static_cast<double>(__bfloat162float(v));
}
template <>
__device__ inline double to_double<__half>(__half v) {
  return static_cast<double>(__half2float(v));
}
template <>
__device__ inline double to_double<__nv_fp8_e4m3>(__nv_fp8_e4m3 v) {
  return static_cast<double>(static_cast<float>(v));
}
template <>
__device__ inline double to_double<__nv_fp8_e5m2>(__nv_fp8_e5m2 v) {
  return static_cast<double>(static_cast<float>(v));
}

// Calls f(T{}) with the CUDA storage type of `t`; returns cudaErrorInvalidValue for a type without one.
template <typename F>
cudaError_t with_storage_type(DType t, F&& f) {
  switch (t) {
#define GPUSCALE_DTYPE_CUDA(id, storage) \
  case DType::id: return f(storage{});
#include "core/dtype_table.def"
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpuscale::cuda
