#include "training/cuda/dp_kernels.cuh"

#include "kernels/cuda/device_types.cuh"

namespace gpuscale::cuda {
namespace {

template <typename T>
__global__ void dp_fill_kernel(T* p, std::uint64_t n, std::uint64_t seed, DpInput which, int id, double scale) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    p[i] = from_double<T>(dp_input_value(seed, which, id, i, scale));
}

}  // namespace

cudaError_t dp_fill(DType type, void* p, std::uint64_t n, std::uint64_t seed, DpInput which, int id, double scale,
                    int blocks, int threads, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  return with_storage_type(type, [&](auto zero) {
    using T = decltype(zero);
    dp_fill_kernel<<<blocks, threads, 0, s>>>(static_cast<T*>(p), n, seed, which, id, scale);
    return cudaGetLastError();
  });
}

}  // namespace gpuscale::cuda
