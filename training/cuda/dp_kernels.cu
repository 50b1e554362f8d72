#include "training/cuda/dp_kernels.cuh"

#include "kernels/cuda/device_types.cuh"
#include "training/cuda/dp_kernels_device.cuh"

namespace gpuscale::cuda {

using device_code::dp_fill_kernel;

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
