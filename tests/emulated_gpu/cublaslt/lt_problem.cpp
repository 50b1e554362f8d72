// A cublasLtMatmul problem from its descriptors: op(A) is m x k, op(B) k x n, C and D m x n
// (cublasLt.h: "D = alpha * op(A) * op(B) + beta * C"), column-major with the layouts' leading dimensions.
#include "tests/emulated_gpu/cublaslt/lt_problem.h"

namespace gpuscale_emu::lt {

std::uint64_t element_bytes(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_64F: return 8;
    case CUDA_R_32F:
    case CUDA_R_32I: return 4;
    case CUDA_R_16F:
    case CUDA_R_16BF: return 2;
    case CUDA_R_8I:
    case CUDA_R_8F_E4M3:
    case CUDA_R_8F_E5M2: return 1;
    default: return 0;
  }
}

namespace {
cublasStatus_t refuse(std::string* why, const char* text) {
  if (why != nullptr) *why = text;
  return CUBLAS_STATUS_INVALID_VALUE;
}
// cublasOperation_t: CUBLAS_OP_C is the conjugate transpose, the transpose for real types.
bool transposed(std::int32_t op) { return op == CUBLAS_OP_T || op == CUBLAS_OP_C; }
bool valid_op(std::int32_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }
}  // namespace

cublasStatus_t make_problem(cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                            cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, Problem& p, std::string* why) {
  if (op == nullptr || a == nullptr || b == nullptr || c == nullptr || d == nullptr)
    return refuse(why, "a descriptor is NULL");
  p.op = *of(op);
  p.a = *of(a);
  p.b = *of(b);
  p.c = *of(c);
  p.d = *of(d);
  if (!valid_op(p.op.trans_a) || !valid_op(p.op.trans_b)) return refuse(why, "TRANSA/TRANSB is not a cublasOperation_t");
  p.trans_a = transposed(p.op.trans_a);
  p.trans_b = transposed(p.op.trans_b);
  p.m = p.d.rows;
  p.n = p.d.cols;
  p.k = p.trans_a ? p.a.rows : p.a.cols;
  const std::uint64_t a_m = p.trans_a ? p.a.cols : p.a.rows;
  const std::uint64_t b_k = p.trans_b ? p.b.cols : p.b.rows, b_n = p.trans_b ? p.b.rows : p.b.cols;
  if (a_m != p.m || b_k != p.k || b_n != p.n || p.c.rows != p.m || p.c.cols != p.n)
    return refuse(why, "the sizes of op(A), op(B), C and D do not chain (m x k, k x n, m x n)");
  // CUBLASLT_MATRIX_LAYOUT_LD: "must be large enough so that matrix memory locations are not
  // overlapping (e.g. greater or equal to CUBLASLT_MATRIX_LAYOUT_ROWS in case of CUBLASLT_ORDER_COL)".
  for (const MatrixLayout* l : {&p.a, &p.b, &p.c, &p.d})
    if (l->ld < 0 || static_cast<std::uint64_t>(l->ld) < l->rows) return refuse(why, "a leading dimension is below the rows");
  // CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: "Number of matmul operations to perform in the batch": one
  // count for the four matrices.
  p.batch = p.d.batch_count;
  if (p.batch < 1 || p.a.batch_count != p.batch || p.b.batch_count != p.batch || p.c.batch_count != p.batch)
    return refuse(why, "the batch counts of A, B, C and D differ (or are below 1)");
  return CUBLAS_STATUS_SUCCESS;
}

std::string peak_key(const Problem& p) {
  switch (p.op.compute) {
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC: return "fp64";
    case CUBLAS_COMPUTE_32F_FAST_TF32: return "tf32";
    case CUBLAS_COMPUTE_32F_FAST_16BF: return "bf16";
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F: return "fp16";
    case CUBLAS_COMPUTE_32I:
    case CUBLAS_COMPUTE_32I_PEDANTIC: return "int8";
    default: break;
  }
  switch (p.a.type) {
    case CUDA_R_16BF: return "bf16";
    case CUDA_R_16F: return "fp16";
    case CUDA_R_8I: return "int8";
    case CUDA_R_8F_E4M3: return p.b.type == CUDA_R_8F_E4M3 ? "fp8_e4m3" : "fp8_e5m2";
    case CUDA_R_8F_E5M2: return "fp8_e5m2";
    default: return "fp32";
  }
}

}  // namespace gpuscale_emu::lt
