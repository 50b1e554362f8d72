#include "kernels/copy_table.h"
#include "kernels/cuda/copy_kernels.cuh"

namespace gpuscale::cuda {
namespace {

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

}  // namespace

cudaError_t fill_copy_words(std::uint32_t* p, std::uint64_t n, std::uint64_t seed, StreamLaunch l, cudaStream_t s) {
  fill_kernel<<<l.blocks, l.threads, 0, s>>>(p, n, seed);
  return cudaGetLastError();
}

cudaError_t count_wrong_copy_words(const std::uint32_t* p, std::uint64_t n, std::uint64_t seed,
                                   unsigned long long* counts, StreamLaunch l, cudaStream_t s) {
  count_kernel<<<l.blocks, l.threads, 0, s>>>(p, n, seed, counts);
  return cudaGetLastError();
}

}  // namespace gpuscale::cuda
