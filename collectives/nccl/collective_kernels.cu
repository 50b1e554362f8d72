#include "collectives/nccl/collective_kernels.cuh"

#include "collectives/nccl/collective_kernels_device.cuh"
#include "kernels/cuda/device_types.cuh"

namespace gpuscale::nccl {

using device_code::check_kernel;
using device_code::corrupt_kernel;
using device_code::fill_kernel;

cudaError_t fill_inputs(DType type, void* p, std::uint64_t n, std::uint64_t seed, RedOp op, std::int64_t range,
                        int rank, int nranks, int contributors, KernelGrid g, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  return cuda::with_storage_type(type, [&](auto zero) {
    using T = decltype(zero);
    fill_kernel<<<g.blocks, g.threads, 0, s>>>(static_cast<T*>(p), n, seed, op, range, rank, nranks, contributors);
    return cudaGetLastError();
  });
}

cudaError_t count_wrong(DType type, const void* result, std::uint64_t n, const CollCheckPlan& plan,
                        unsigned long long* wrong, KernelGrid g, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  return cuda::with_storage_type(type, [&](auto zero) {
    using T = decltype(zero);
    check_kernel<<<g.blocks, g.threads, 0, s>>>(static_cast<const T*>(result), n, plan, wrong);
    return cudaGetLastError();
  });
}

cudaError_t corrupt_first(DType type, void* p, cudaStream_t s) {
  return cuda::with_storage_type(type, [&](auto zero) {
    using T = decltype(zero);
    corrupt_kernel<<<1, 1, 0, s>>>(static_cast<T*>(p));
    return cudaGetLastError();
  });
}

}  // namespace gpuscale::nccl
