#pragma once
// The dp-step's input fill, device code. No launches and no host API here, so the
// emulated GPU's tests compile this same source for the host (tests/emulated_gpu/kernels); the
// launches are in dp_kernels.cu. A named namespace, not an anonymous one, so nvcc's and a host compiler's
// mangled names agree.
#include <cstdint>

#include "kernels/cuda/device_types.cuh"
#include "training/dp_inputs.h"

namespace gpuscale::cuda::device_code {

template <typename T>
__global__ void dp_fill_kernel(T* p, std::uint64_t n, std::uint64_t seed, DpInput which, int id, double scale) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    p[i] = from_double<T>(dp_input_value(seed, which, id, i, scale));
}

}  // namespace gpuscale::cuda::device_code
