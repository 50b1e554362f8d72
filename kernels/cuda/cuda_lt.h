#pragma once
// One GEMM problem for cuBLASLt (operation descriptor, matrix layouts, preference with a workspace),
// its heuristic's algorithms and one product, shared by the GEMM benchmark (kernels/cuda/cuda_gemm.cpp)
// and the CUDA dp-step (training/cuda). Internal to the CUDA backend.
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.h"
#include "kernels/cuda/cuda_plan.h"
#include "kernels/cuda/cuda_util.h"
#include "kernels/gemm_spec.h"

namespace gpuscale::cuda {

struct LtTypes {
  cudaDataType_t ab, c, scale;
  cublasComputeType_t compute;
  const char* compute_name;
};

// cuBLASLt's types for a GEMM at `type` (throws gpuscale::Error for a type without a GEMM).
LtTypes lt_types(DType t);

// The operation and matrix layouts cuBLASLt needs, owned together. Column-major like cuBLAS: A is
// m x k (k x m when transposed), B is k x n (n x k when transposed), C = D is m x n.
class LtProblem {
 public:
  LtProblem(DType type, const GemmShape& s) : types_(lt_types(type)), reduction_mask_(gemm_reduction_scheme_mask(type, s.fixed_algorithm)) {
    check(cublasLtMatmulDescCreate(&op_, types_.compute, types_.scale), "cublasLtMatmulDescCreate");
    const cublasOperation_t ta = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "cublasLtMatmulDescSetAttribute");
    check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "cublasLtMatmulDescSetAttribute");
    if (gemm_has_fast_accum(type)) {
      const std::int8_t fast = s.fast_accum ? 1 : 0;
      check(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast),
            "cublasLtMatmulDescSetAttribute");
    }
    const std::uint64_t ar = s.trans_a ? s.k : s.m, ac = s.trans_a ? s.m : s.k;
    const std::uint64_t br = s.trans_b ? s.n : s.k, bc = s.trans_b ? s.k : s.n;
    check(cublasLtMatrixLayoutCreate(&a_, types_.ab, ar, ac, static_cast<std::int64_t>(ar)), "cublasLtMatrixLayoutCreate");
    check(cublasLtMatrixLayoutCreate(&b_, types_.ab, br, bc, static_cast<std::int64_t>(br)), "cublasLtMatrixLayoutCreate");
    check(cublasLtMatrixLayoutCreate(&c_, types_.c, s.m, s.n, static_cast<std::int64_t>(s.m)), "cublasLtMatrixLayoutCreate");
    check(cublasLtMatmulPreferenceCreate(&pref_), "cublasLtMatmulPreferenceCreate");
    const std::uint64_t ws = kGemmWorkspaceBytes;
    check(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
          "cublasLtMatmulPreferenceSetAttribute");
    check(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reduction_mask_,
                                               sizeof reduction_mask_),
          "cublasLtMatmulPreferenceSetAttribute");
  }
  LtProblem(const LtProblem&) = delete;
  LtProblem& operator=(const LtProblem&) = delete;
  ~LtProblem() {
    if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
    if (c_) cublasLtMatrixLayoutDestroy(c_);
    if (b_) cublasLtMatrixLayoutDestroy(b_);
    if (a_) cublasLtMatrixLayoutDestroy(a_);
    if (op_) cublasLtMatmulDescDestroy(op_);
  }

  // The heuristic's top-K algorithms; empty when it has none (a status of NOT_SUPPORTED included).
  std::vector<cublasLtMatmulHeuristicResult_t> heuristic(cublasLtHandle_t lt, int count = kGemmCandidates) const {
    std::vector<cublasLtMatmulHeuristicResult_t> res(static_cast<std::size_t>(count));
    int found = 0;
    const auto rc = cublasLtMatmulAlgoGetHeuristic(lt, op_, a_, b_, c_, c_, pref_, count, res.data(), &found);
    if (rc == CUBLAS_STATUS_NOT_SUPPORTED) return {};
    check(rc, "cublasLtMatmulAlgoGetHeuristic");
    res.resize(static_cast<std::size_t>(std::max(found, 0)));
    std::erase_if(res, [](const auto& r) { return r.state != CUBLAS_STATUS_SUCCESS; });
    return res;
  }

  const LtTypes& types() const { return types_; }
  std::uint32_t reduction_mask() const { return reduction_mask_; }  // split-K schemes allowed
  cublasLtMatmulDesc_t op() const { return op_; }
  cublasLtMatrixLayout_t a() const { return a_; }
  cublasLtMatrixLayout_t b() const { return b_; }
  cublasLtMatrixLayout_t c() const { return c_; }

 private:
  LtTypes types_;
  std::uint32_t reduction_mask_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
};

// The algorithm's configuration (algo id, tile, stages, split-k, ...), for the result file.
nlohmann::json algo_config(const cublasLtMatmulAlgo_t& algo);

// D = C = op(A) op(B) with alpha 1 and beta 0 in the problem's scale type, on `stream`.
void lt_matmul(cublasLtHandle_t lt, const LtProblem& problem, const cublasLtMatmulAlgo_t& algo, const void* a,
               const void* b, void* c, void* workspace, std::uint64_t workspace_bytes, cudaStream_t stream);

}  // namespace gpuscale::cuda
