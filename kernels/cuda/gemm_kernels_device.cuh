#pragma once
// The device code of the kernels around the cuBLASLt GEMM: input fill, the verification gather,
// the test-only fault. No launches and no host API here, so the
// emulated GPU's tests compile this same source for the host (tests/emulated_gpu/kernels); the
// launches are in gemm_kernels.cu. A named namespace, not an anonymous one, so nvcc's and a host compiler's
// mangled names agree.
#include <cstdint>

#include "kernels/cuda/device_types.cuh"
#include "kernels/cuda/gemm_kernels.cuh"

namespace gpuscale::cuda::device_code {

template <typename T>
__global__ void fill_kernel(T* p, std::uint64_t n, std::uint64_t seed, GemmMatrix which, bool integer) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    p[i] = from_double<T>(gemm_input_value(seed, which, i, integer));
}

template <typename TI, typename TO>
__global__ void gather_kernel(GemmGather g) {
  const TI* a = static_cast<const TI*>(g.a);
  const TI* b = static_cast<const TI*>(g.b);
  const TO* c = static_cast<const TO*>(g.c);
  const std::uint64_t total = static_cast<std::uint64_t>(g.count) * g.k;
  for (std::uint64_t t = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t s = t / g.k, p = t % g.k;
    const std::uint64_t i = g.rows[s], j = g.cols[s];
    // Column-major storage: A is m x k (lda m), or k x m (lda k) when transposed; B likewise.
    g.a_out[t] = to_double(g.trans_a ? a[p + i * g.k] : a[i + p * g.m]);
    g.b_out[t] = to_double(g.trans_b ? b[j + p * g.n] : b[p + j * g.k]);
    if (p == 0) g.c_out[s] = to_double(c[i + j * g.m]);
  }
}

template <typename T>
__global__ void corrupt_kernel(T* c, std::uint64_t index) {
  c[index] = from_double<T>(to_double(c[index]) + 1.0);
}

}  // namespace gpuscale::cuda::device_code
