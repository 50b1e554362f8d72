#include "kernels/copy_table.h"
#include "kernels/cuda/copy_kernels.cuh"
#include "kernels/cuda/copy_kernels_device.cuh"

namespace gpuscale::cuda {

using device_code::count_kernel;
using device_code::fill_kernel;

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
