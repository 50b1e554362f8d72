#pragma once
// The device code of the kernels around the NCCL collectives: input fill, the exact check, the
// test-only fault. No launches and no host API here, so the
// emulated GPU's tests compile this same source for the host (tests/emulated_gpu/kernels); the
// launches are in collective_kernels.cu. A named namespace, not an anonymous one, so nvcc's and a host compiler's
// mangled names agree.
#include <cstdint>

#include "collectives/nccl/collective_kernels.cuh"
#include "kernels/cuda/device_types.cuh"

namespace gpuscale::nccl::device_code {

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

}  // namespace gpuscale::nccl::device_code
