#pragma once
// Kernels around the cuBLASLt GEMM: random inputs generated on the device (gemm_input_value rounded to
// the input type, exactly as the GPU stores them), the gather of the entries verification needs (rows
// of op(A), columns of op(B) and the sampled entries of C, as doubles), and the test-only fault.
#include <cuda_runtime.h>

#include <cstdint>

#include "core/dtype.h"
#include "kernels/cuda/stream_kernels.cuh"
#include "kernels/gemm_spec.h"

namespace gpuscale::cuda {

// p[i] = gemm_input_value(seed, which, i) in `type` (fp64, fp32/tf32, bf16, fp16, fp8_e4m3, int8).
cudaError_t gemm_fill(DType type, void* p, std::uint64_t n, std::uint64_t seed, GemmMatrix which, StreamLaunch l,
                      cudaStream_t s);

struct GemmGather {
  DType in_type;   // A and B
  DType out_type;  // C
  std::uint64_t m, n, k;
  bool trans_a, trans_b;
  const void* a;
  const void* b;
  const void* c;
  const std::uint64_t* rows;  // count sampled (row, column) pairs of C, on the device
  const std::uint64_t* cols;
  int count;
  double* a_out;  // count x k: op(A)[row][p]
  double* b_out;  // count x k: op(B)[p][col]
  double* c_out;  // count: C[row][col]
};
cudaError_t gemm_gather(const GemmGather& g, StreamLaunch l, cudaStream_t s);

// Test-only (GPUSCALE_TEST_FAULT=wrong:gemm): adds 1 to C[index] in its own type.
cudaError_t gemm_corrupt(DType out_type, void* c, std::uint64_t index, cudaStream_t s);

}  // namespace gpuscale::cuda
