#pragma once
// Input generation for the CUDA dp-step: dp_input_value in the step's dtype, on the device.
#include <cuda_runtime.h>

#include <cstdint>

#include "core/dtype.h"
#include "training/dp_inputs.h"

namespace gpuscale::cuda {

// p[i] = dp_input_value(seed, which, id, i, scale) in `type`, for i < n.
cudaError_t dp_fill(DType type, void* p, std::uint64_t n, std::uint64_t seed, DpInput which, int id, double scale,
                    int blocks, int threads, cudaStream_t s);

}  // namespace gpuscale::cuda
