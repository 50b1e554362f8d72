#include "collectives/nccl/collective_kernels.cuh"

#include "kernels/cuda/device_types.cuh"

namespace gpuscale::nccl {
namespace {

using cuda::from_double;
using cuda::to_double;

__device__ inline std::uint64_t first_index() { return blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; }
__device__ inline std::uint64_t stride() { return static_cast<std::uint64_t>(gridDim.x) * blockDim.x; }

template <typename T>
__global__ void fill_kernel(T* p, std::uint64_t n, std::uint64_t seed, RedOp op, std::int64_t range, int rank,
                            int nranks, int contributors) {
  for (std::uint64_t i = first_index(); i < n; i += stride())
    p[i] = from_double<T>(collective_input(seed, op, range, rank, i, nranks, contributors));
}

template <typename T>
__global__ void check_kernel(const T* p, std::uint64_t n, CollCheckPlan plan, unsigned long long* wrong) {
  unsigned long long mine = 0;
  for (std::uint64_t i = first_index(); i < n; i += stride())
    if (coll_sampled(plan, i) && !coll_value_ok(to_double(p[i]), coll_expected(plan, i))) ++mine;
  if (mine) atomicAdd(wrong, mine);
}

template <typename T>
__global__ void corrupt_kernel(T* p) {
  p[0] = from_double<T>(to_double(p[0]) > 0 ? -1.0 : 1.0);
}

}  // namespace

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
