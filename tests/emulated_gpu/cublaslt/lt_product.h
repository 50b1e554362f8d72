#pragma once
// The product itself, on host memory: D = alpha op(A) op(B) + beta C per batch member, in the
// arithmetic the compute type names (cuBLAS documentation, cublasComputeType_t), with FP8's
// tensor-wide scales (cublasLtMatmul(), FP8: D = scaleD (alpha scaleA scaleB op(A) op(B) + beta scaleC C)).
// Pure: it knows nothing of streams or devices.
#include <cstdint>

#include <cublasLt.h>

namespace gpuscale_emu::lt {

struct MatrixRef {
  const void* data = nullptr;
  cudaDataType_t type = CUDA_R_32F;
  std::int64_t ld = 0;
  std::int64_t batch_stride = 0;  // elements between batch members
};

enum class Accumulator { f64, f32, f16, i32 };
// How the multiply rounds fp32 inputs first (cublasComputeType_t: CUBLAS_COMPUTE_32F_FAST_TF32 / _16BF /
// _16F "allows the library to use Tensor Cores with automatic down-conversion").
enum class InputRounding { none, tf32, bf16, fp16 };

struct ProductSpec {
  Accumulator acc = Accumulator::f32;
  InputRounding rounding = InputRounding::none;
  cudaDataType_t scale_type = CUDA_R_32F;
  bool trans_a = false, trans_b = false;
  std::uint64_t m = 0, n = 0, k = 0;
  int batch = 1;
  MatrixRef a, b, c, d;  // d.data is written
  double alpha = 1, beta = 0;  // in the scale type (exact: the caller read them as that type)
  float scale_a = 1, scale_b = 1, scale_c = 1, scale_d = 1;  // FP8 only; 1 otherwise
  // The K range is summed as this many consecutive partial sums, added in order (floating-point
  // accumulators only; integer sums are exact in any order). lt_matmul sets it from the device's SM
  // count (k_partial_sums): the emulation's concrete form of cuBLAS's "Results reproducibility" promise,
  // identical bits only on GPUs of the same architecture and SM count.
  int k_parts = 1;
};

// The partial sums of K on a device of `sm_count` SMs: sm_count % 7 + 1. The rule is the emulation's own
// (cuBLAS does not document how its kernels split K); what it keeps from cuBLAS is that the same SM count
// gives the same bits and another may not (132 SMs: 7 parts, the 114 of an H100 PCIe: 3).
int k_partial_sums(int sm_count);

// The accumulator and input rounding of a compute type.
Accumulator accumulator_of(cublasComputeType_t c);
InputRounding rounding_of(cublasComputeType_t c);

void compute_product(const ProductSpec& s);

// fp32 -> tf32 as the PTX ISA's cvt.rna.tf32.f32 does (round to nearest, ties away from zero, to 10
// mantissa bits): the rounding the multiply applies to each fp32 input under FAST_TF32.
float round_to_tf32(float x);

}  // namespace gpuscale_emu::lt
