// Which problems cuBLASLt documents as supported: the cuBLAS documentation's table of data types for
// cublasLtMatmul() (section "cublasLtMatmul()", the tables of Atype/Btype/Ctype/Dtype per computeType
// and scaleType, regular and FP8), the FP8 and IMMA requirements in the same section's notes, and the
// descriptor attributes' own limits in cublasLt.h. The emulation refuses what these refuse, nothing more.
#include <array>

#include "tests/emulated_gpu/cublaslt/lt_problem.h"

namespace gpuscale_emu::lt {
namespace {

struct TypeRow {
  cublasComputeType_t compute;
  cudaDataType_t scale, a, b, c, d;
};

constexpr auto R16F = CUDA_R_16F, R16BF = CUDA_R_16BF, R32F = CUDA_R_32F, R64F = CUDA_R_64F, R8I = CUDA_R_8I,
               R32I = CUDA_R_32I, E4M3 = CUDA_R_8F_E4M3, E5M2 = CUDA_R_8F_E5M2;

// The real-valued rows of the documentation's tables (complex types are not emulated). The _PEDANTIC
// compute types share their base type's rows (cublasComputeType_t: "... _PEDANTIC: ... only the
// selected precision is used").
constexpr std::array kRows{
    // computeType 16F, scaleType 16F
    TypeRow{CUBLAS_COMPUTE_16F, R16F, R16F, R16F, R16F, R16F},
    // computeType 32I: scaleType 32I with C = D = 32I; scaleType 32F with C = D = 8I
    TypeRow{CUBLAS_COMPUTE_32I, R32I, R8I, R8I, R32I, R32I},
    TypeRow{CUBLAS_COMPUTE_32I, R32F, R8I, R8I, R8I, R8I},
    // computeType 32F, scaleType 32F
    TypeRow{CUBLAS_COMPUTE_32F, R32F, R16BF, R16BF, R16BF, R16BF},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, R16F, R16F, R16F, R16F},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, R8I, R8I, R32F, R32F},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, R16BF, R16BF, R32F, R32F},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, R16F, R16F, R32F, R32F},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, R32F, R32F, R32F, R32F},
    // computeType 32F_FAST_16F / 32F_FAST_16BF / 32F_FAST_TF32, scaleType 32F: fp32 matrices
    TypeRow{CUBLAS_COMPUTE_32F_FAST_16F, R32F, R32F, R32F, R32F, R32F},
    TypeRow{CUBLAS_COMPUTE_32F_FAST_16BF, R32F, R32F, R32F, R32F, R32F},
    TypeRow{CUBLAS_COMPUTE_32F_FAST_TF32, R32F, R32F, R32F, R32F, R32F},
    // computeType 64F, scaleType 64F
    TypeRow{CUBLAS_COMPUTE_64F, R64F, R64F, R64F, R64F, R64F},
    // FP8 table (computeType 32F, scaleType 32F). E4M3 x E4M3: C BF16 -> D BF16 or E4M3, C FP16 -> D
    // FP16 or E4M3, C FP32 -> D FP32. E4M3 x E5M2 and E5M2 x E4M3 add D E5M2. E5M2 x E5M2 has no row.
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E4M3, E4M3, R16BF, R16BF},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E4M3, E4M3, R16BF, E4M3},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E4M3, E4M3, R16F, R16F},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E4M3, E4M3, R16F, E4M3},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E4M3, E4M3, R32F, R32F},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E4M3, E5M2, R16BF, R16BF},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E4M3, E5M2, R16BF, E4M3},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E4M3, E5M2, R16BF, E5M2},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E4M3, E5M2, R16F, R16F},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E4M3, E5M2, R16F, E4M3},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E4M3, E5M2, R16F, E5M2},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E4M3, E5M2, R32F, R32F},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E5M2, E4M3, R16BF, R16BF},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E5M2, E4M3, R16BF, E4M3},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E5M2, E4M3, R16BF, E5M2},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E5M2, E4M3, R16F, R16F},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E5M2, E4M3, R16F, E4M3},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E5M2, E4M3, R16F, E5M2},
    TypeRow{CUBLAS_COMPUTE_32F, R32F, E5M2, E4M3, R32F, R32F},
};

cublasComputeType_t base_compute(cublasComputeType_t c) {
  switch (c) {
    case CUBLAS_COMPUTE_16F_PEDANTIC: return CUBLAS_COMPUTE_16F;
    case CUBLAS_COMPUTE_32F_PEDANTIC: return CUBLAS_COMPUTE_32F;
    case CUBLAS_COMPUTE_64F_PEDANTIC: return CUBLAS_COMPUTE_64F;
    case CUBLAS_COMPUTE_32I_PEDANTIC: return CUBLAS_COMPUTE_32I;
    default: return c;
  }
}

bool is_fp8(cudaDataType_t t) { return t == E4M3 || t == E5M2; }

// Bytes of `count` elements of `t` are a multiple of `bytes`.
bool aligned(std::uint64_t count, cudaDataType_t t, std::uint64_t bytes) { return count * element_bytes(t) % bytes == 0; }

}  // namespace

int type_row(const Problem& p) {
  const auto compute = base_compute(p.op.compute);
  for (std::size_t i = 0; i < kRows.size(); ++i) {
    const auto& r = kRows[i];
    if (r.compute == compute && r.scale == p.op.scale && r.a == p.a.type && r.b == p.b.type && r.c == p.c.type &&
        r.d == p.d.type)
      return static_cast<int>(i);
  }
  return -1;
}

std::string unsupported_reason(const Problem& p, int cc) {
  if (type_row(p) < 0) return "no row of cublasLtMatmul's table of supported data types matches";
  // Emulation limits, not NVIDIA's: what the CUDA module never asks for is not modelled.
  for (const MatrixLayout* l : {&p.a, &p.b, &p.c, &p.d})
    if (l->order != CUBLASLT_ORDER_COL || l->plane_offset != 0 || l->batch_mode != CUBLASLT_BATCH_MODE_STRIDED)
      return "the emulation models column-major, strided-batch, real layouts only";
  if (p.op.epilogue != CUBLASLT_EPILOGUE_DEFAULT) return "the emulation models CUBLASLT_EPILOGUE_DEFAULT only";
  if (p.op.amax_d != nullptr) return "the emulation does not compute CUBLASLT_MATMUL_DESC_AMAX_D_POINTER";
  if (p.op.pointer_mode != CUBLASLT_POINTER_MODE_HOST && p.op.pointer_mode != CUBLASLT_POINTER_MODE_DEVICE)
    return "the emulation models host and device pointer modes only";
  // cublasLt.h, CUBLASLT_MATMUL_DESC_TRANSC: "Currently only CUBLAS_OP_N is supported."
  if (p.op.trans_c != CUBLAS_OP_N) return "TRANSC must be CUBLAS_OP_N";
  // cublasLt.h, CUBLASLT_MATMUL_DESC_FILL_MODE: a full matrix is the only one cublasLtMatmul computes.
  if (p.op.fill_mode != CUBLAS_FILL_MODE_FULL) return "FILL_MODE must be CUBLAS_FILL_MODE_FULL";

  if (is_fp8(p.a.type)) {
    // cublasLtMatmul(), FP8 notes: FP8 matmuls need compute capability 8.9 (Ada) or 9.0 (Hopper) and later.
    if (cc < 89) return "FP8 needs compute capability 8.9 or later";
    // cublasLtMatmul(), FP8 notes: on compute capability 8.9 and 9.0 "only the TN format is supported"
    // (A transposed, B not); compute capability 10.0 and later take every layout.
    if (cc < 100 && !(p.trans_a && !p.trans_b)) return "FP8 before compute capability 10.0 supports the TN format only";
    // cublasLtMatmul(), FP8 notes: "All matrix dimensions must meet the optimal requirements listed in
    // Tensor Core Usage (i.e. pointers and matrix dimension must support 16-byte alignment)".
    if (!aligned(p.a.rows, p.a.type, 16) || !aligned(p.b.rows, p.b.type, 16) || !aligned(p.m, p.c.type, 16) ||
        !aligned(p.m, p.d.type, 16))
      return "FP8 needs the contiguous dimension of every matrix to be a multiple of 16 bytes";
    for (const MatrixLayout* l : {&p.a, &p.b, &p.c, &p.d})
      if (!aligned(static_cast<std::uint64_t>(l->ld), l->type, 16))
        return "FP8 needs every leading dimension to be a multiple of 16 bytes";
  } else if (p.op.a_scale || p.op.b_scale || p.op.c_scale || p.op.d_scale) {
    // cublasLt.h, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER ..: "If set for an unsupported matrix data,
    // scale, and compute type combination, calling cublasLtMatmul() will return CUBLAS_INVALID_VALUE":
    // tensor-wide scales are documented for FP8 inputs only. (The matmul itself returns that status.)
    return "scale pointers are supported with FP8 inputs only";
  }

  if (p.a.type == R8I) {
    // cublasLtMatmul(), IMMA notes, regular data ordering: "Leading dimensions of matrices A, B, C must
    // be multiples of 4", "Only the 'TN' format is supported - A must be transposed and B
    // non-transposed", "Dimensions m and k must be multiples of 4".
    if (!(p.trans_a && !p.trans_b)) return "int8 (IMMA) supports the TN format only";
    if (p.a.ld % 4 != 0 || p.b.ld % 4 != 0 || p.c.ld % 4 != 0 || p.d.ld % 4 != 0)
      return "int8 (IMMA) needs leading dimensions that are multiples of 4";
    if (p.m % 4 != 0 || p.k % 4 != 0) return "int8 (IMMA) needs m and k to be multiples of 4";
  }
  return "";
}

}  // namespace gpuscale_emu::lt
