#pragma once
// The copy benchmarks' kernels' device code: fill a buffer with copy_word, count the words that
// differ from it. No launches and no host API here, so the
// emulated GPU's tests compile this same source for the host (tests/emulated_gpu/kernels); the
// launches are in copy_kernels.cu. A named namespace, not an anonymous one, so nvcc's and a host compiler's
// mangled names agree.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/copy_table.h"

namespace gpuscale::cuda::device_code {

__global__ void fill_kernel(std::uint32_t* p, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    p[i] = copy_word(seed, i);
}

__global__ void count_kernel(const std::uint32_t* p, std::uint64_t n, std::uint64_t seed, unsigned long long* counts) {
  unsigned long long wrong = 0, first = ~0ULL;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    if (p[i] != copy_word(seed, i)) {
      ++wrong;
      if (i < first) first = i;
    }
  if (wrong > 0) {
    atomicAdd(&counts[0], wrong);
    atomicMin(&counts[1], first);
  }
}

}  // namespace gpuscale::cuda::device_code
