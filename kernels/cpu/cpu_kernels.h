#pragma once
// Internal to the CPU device: the factories its Device implementation hands out.
#include <memory>
#include <vector>

#include "kernels/device.h"

namespace gpuscale {

// The STREAM kernels cpu_stream.cpp runs (read and write are CUDA's only, for now).
std::vector<StreamOp> cpu_stream_ops();
std::unique_ptr<StreamArrays> make_cpu_stream(DType type, std::uint64_t elements, std::uint64_t seed);
std::unique_ptr<GemmProblem> make_cpu_gemm(DType type, const GemmShape& shape, std::uint64_t seed);

}  // namespace gpuscale
