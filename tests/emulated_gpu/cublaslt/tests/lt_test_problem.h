#pragma once
// A cuBLASLt problem set up through the public C API, as the CUDA module sets one up (tests only).
#include <cstdint>
#include <vector>

#include <cublasLt.h>
#include <gtest/gtest.h>

#include "tests/emulated_gpu/cublaslt/tests/core_stand_in.h"

struct LtTypes {
  cublasComputeType_t compute;
  cudaDataType_t scale, a, b, c, d;
};

struct LtShape {
  std::uint64_t m, n, k;
  bool trans_a = false, trans_b = false;
  std::int64_t pad = 0;  // added to every leading dimension
  int batch = 1;
};

class LtTestProblem {
 public:
  LtTestProblem(const LtTypes& t, const LtShape& s) : t_(t), s_(s) {
    EXPECT_EQ(cublasLtCreate(&handle_), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatmulDescCreate(&op_, t.compute, t.scale), CUBLAS_STATUS_SUCCESS);
    const std::int32_t ta = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    EXPECT_EQ(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), CUBLAS_STATUS_SUCCESS);
    a_rows = s.trans_a ? s.k : s.m, a_cols = s.trans_a ? s.m : s.k;
    b_rows = s.trans_b ? s.n : s.k, b_cols = s.trans_b ? s.k : s.n;
    lda = static_cast<std::int64_t>(a_rows) + s.pad, ldb = static_cast<std::int64_t>(b_rows) + s.pad;
    ldc = static_cast<std::int64_t>(s.m) + s.pad;
    EXPECT_EQ(cublasLtMatrixLayoutCreate(&a_, t.a, a_rows, a_cols, lda), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatrixLayoutCreate(&b_, t.b, b_rows, b_cols, ldb), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatrixLayoutCreate(&c_, t.c, s.m, s.n, ldc), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatrixLayoutCreate(&d_, t.d, s.m, s.n, ldc), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatmulPreferenceCreate(&pref_), CUBLAS_STATUS_SUCCESS);
    set_workspace(32u << 20);
  }
  LtTestProblem(const LtTestProblem&) = delete;
  LtTestProblem& operator=(const LtTestProblem&) = delete;
  ~LtTestProblem() {
    cublasLtMatmulPreferenceDestroy(pref_);
    for (auto l : {a_, b_, c_, d_}) cublasLtMatrixLayoutDestroy(l);
    cublasLtMatmulDescDestroy(op_);
    cublasLtDestroy(handle_);
  }

  void set_workspace(std::uint64_t bytes) {
    EXPECT_EQ(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes, sizeof bytes),
              CUBLAS_STATUS_SUCCESS);
  }
  // Sets batch count and strides (elements) on all four layouts.
  void set_batch(int count, std::int64_t stride_a, std::int64_t stride_b, std::int64_t stride_c) {
    const std::pair<cublasLtMatrixLayout_t, std::int64_t> ls[] = {{a_, stride_a}, {b_, stride_b}, {c_, stride_c}, {d_, stride_c}};
    for (auto [l, stride] : ls) {
      EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count), CUBLAS_STATUS_SUCCESS);
      EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
                CUBLAS_STATUS_SUCCESS);
    }
  }

  cublasStatus_t heuristic(std::vector<cublasLtMatmulHeuristicResult_t>& out, int requested = 8) {
    out.assign(static_cast<std::size_t>(requested), {});
    int found = -1;
    const auto rc = cublasLtMatmulAlgoGetHeuristic(handle_, op_, a_, b_, c_, d_, pref_, requested, out.data(), &found);
    out.resize(static_cast<std::size_t>(found < 0 ? 0 : found));
    return rc;
  }

  // D = alpha op(A) op(B) + beta C with the heuristic's first algorithm (alpha, beta in the scale type).
  cublasStatus_t matmul(const void* alpha, const void* a, const void* b, const void* beta, const void* c, void* d) {
    std::vector<cublasLtMatmulHeuristicResult_t> r;
    if (const auto rc = heuristic(r, 1); rc != CUBLAS_STATUS_SUCCESS) return rc;
    return cublasLtMatmul(handle_, op_, alpha, a, a_, b, b_, beta, c, c_, d, d_, &r[0].algo, workspace_.data(),
                          workspace_.size(), nullptr);
  }

  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr, d_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  std::uint64_t a_rows = 0, a_cols = 0, b_rows = 0, b_cols = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::vector<unsigned char> workspace_ = std::vector<unsigned char>(32u << 20);

 private:
  LtTypes t_;
  LtShape s_;
};
