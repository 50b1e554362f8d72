// The heuristic's documented rules: the type table, FP8's TN rule below compute capability 10.0,
// int8's IMMA requirements, the preference's workspace and reduction mask, NOT_SUPPORTED with no
// algorithms, and configurations that read back.
#include "tests/emulated_gpu/cublaslt/tests/lt_test_problem.h"

namespace {

constexpr LtTypes kBf16{CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF};
constexpr LtTypes kFp8{CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF};
constexpr LtTypes kInt8{CUBLAS_COMPUTE_32I, CUDA_R_32I, CUDA_R_8I, CUDA_R_8I, CUDA_R_32I, CUDA_R_32I};

class LtHeuristic : public ::testing::Test {
 protected:
  void SetUp() override { stand_in::reset(); }
  // The heuristic's status for a problem (and that NOT_SUPPORTED comes with no algorithms).
  static cublasStatus_t status(const LtTypes& t, const LtShape& s) {
    LtTestProblem p(t, s);
    std::vector<cublasLtMatmulHeuristicResult_t> r;
    const auto rc = p.heuristic(r);
    if (rc == CUBLAS_STATUS_NOT_SUPPORTED) {
      EXPECT_TRUE(r.empty());
    }
    if (rc == CUBLAS_STATUS_SUCCESS) {
      EXPECT_FALSE(r.empty());
    }
    return rc;
  }
};

TEST_F(LtHeuristic, Fp8IsTnOnlyBeforeComputeCapability10) {
  const LtShape nn{256, 256, 256, false, false}, tn{256, 256, 256, true, false};
  EXPECT_EQ(status(kFp8, nn), CUBLAS_STATUS_NOT_SUPPORTED);  // h100: 9.0
  EXPECT_EQ(status(kFp8, tn), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(status(kFp8, {256, 256, 256, true, true}), CUBLAS_STATUS_NOT_SUPPORTED);
  stand_in::set_compute_capability(8, 9);
  EXPECT_EQ(status(kFp8, nn), CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(status(kFp8, tn), CUBLAS_STATUS_SUCCESS);
  stand_in::set_compute_capability(10, 0);
  EXPECT_EQ(status(kFp8, nn), CUBLAS_STATUS_SUCCESS);
  stand_in::set_compute_capability(8, 0);  // no FP8 tensor cores
  EXPECT_EQ(status(kFp8, tn), CUBLAS_STATUS_NOT_SUPPORTED);
}

TEST_F(LtHeuristic, Fp8NeedsSixteenByteDimensions) {
  EXPECT_EQ(status(kFp8, {256, 256, 264, true, false}), CUBLAS_STATUS_NOT_SUPPORTED);  // k = 264: lda 264 bytes
  EXPECT_EQ(status(kFp8, {256, 256, 272, true, false}), CUBLAS_STATUS_SUCCESS);
}

TEST_F(LtHeuristic, TypeTable) {
  EXPECT_EQ(status(kBf16, {64, 64, 64}), CUBLAS_STATUS_SUCCESS);
  const LtTypes e5m2_both{CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_8F_E5M2, CUDA_R_8F_E5M2, CUDA_R_16BF, CUDA_R_16BF};
  EXPECT_EQ(status(e5m2_both, {64, 64, 64, true, false}), CUBLAS_STATUS_NOT_SUPPORTED);
  const LtTypes mixed{CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_8F_E4M3, CUDA_R_8F_E5M2, CUDA_R_16BF, CUDA_R_16BF};
  EXPECT_EQ(status(mixed, {64, 64, 64, true, false}), CUBLAS_STATUS_SUCCESS);
  const LtTypes bf16_to_fp16{CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16F, CUDA_R_16F};
  EXPECT_EQ(status(bf16_to_fp16, {64, 64, 64}), CUBLAS_STATUS_NOT_SUPPORTED);
  const LtTypes fp32_at_64f{CUBLAS_COMPUTE_64F, CUDA_R_64F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F};
  EXPECT_EQ(status(fp32_at_64f, {64, 64, 64}), CUBLAS_STATUS_NOT_SUPPORTED);
  const LtTypes tf32{CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F};
  EXPECT_EQ(status(tf32, {64, 64, 64}), CUBLAS_STATUS_SUCCESS);
  const LtTypes tf32_bf16{CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF};
  EXPECT_EQ(status(tf32_bf16, {64, 64, 64}), CUBLAS_STATUS_NOT_SUPPORTED);
}

TEST_F(LtHeuristic, Int8ImmaRequirements) {
  EXPECT_EQ(status(kInt8, {64, 64, 64, true, false}), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(status(kInt8, {64, 64, 64, false, false}), CUBLAS_STATUS_NOT_SUPPORTED);  // not TN
  EXPECT_EQ(status(kInt8, {64, 64, 64, true, true}), CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(status(kInt8, {62, 64, 64, true, false}), CUBLAS_STATUS_NOT_SUPPORTED);  // m not a multiple of 4
  EXPECT_EQ(status(kInt8, {64, 64, 62, true, false}), CUBLAS_STATUS_NOT_SUPPORTED);  // k
  EXPECT_EQ(status(kInt8, {64, 62, 64, true, false}), CUBLAS_STATUS_SUCCESS);        // n is free
  LtShape padded{64, 64, 64, true, false};
  padded.pad = 2;  // leading dimensions 66
  EXPECT_EQ(status(kInt8, padded), CUBLAS_STATUS_NOT_SUPPORTED);
  padded.pad = 4;
  EXPECT_EQ(status(kInt8, padded), CUBLAS_STATUS_SUCCESS);
}

TEST_F(LtHeuristic, InvalidRequests) {
  LtTestProblem p(kBf16, {64, 64, 64});
  cublasLtMatmulHeuristicResult_t r[1];
  int found = -1;
  EXPECT_EQ(cublasLtMatmulAlgoGetHeuristic(p.handle_, p.op_, p.a_, p.b_, p.c_, p.d_, p.pref_, 0, r, &found),
            CUBLAS_STATUS_INVALID_VALUE);
  // B of 32 x 64 does not chain with op(A) of 64 x 64.
  cublasLtMatrixLayout_t wrong = nullptr;
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&wrong, CUDA_R_16BF, 32, 64, 32), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatmulAlgoGetHeuristic(p.handle_, p.op_, p.a_, wrong, p.c_, p.d_, p.pref_, 1, r, &found),
            CUBLAS_STATUS_INVALID_VALUE);
  cublasLtMatrixLayoutDestroy(wrong);
}

std::int32_t config32(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  std::int32_t v = -1;
  std::size_t written = 0;
  EXPECT_EQ(cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof v, &written), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(written, sizeof v);
  return v;
}

TEST_F(LtHeuristic, ConfigurationsReadBackAndRepeat) {
  LtTestProblem p(kBf16, {4096, 4096, 4096});
  std::vector<cublasLtMatmulHeuristicResult_t> first, second;
  ASSERT_EQ(p.heuristic(first), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(p.heuristic(second), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(first.size(), second.size());
  const cublasLtMatmulAlgoConfigAttributes_t attrs[] = {
      CUBLASLT_ALGO_CONFIG_ID, CUBLASLT_ALGO_CONFIG_TILE_ID, CUBLASLT_ALGO_CONFIG_STAGES_ID,
      CUBLASLT_ALGO_CONFIG_SPLITK_NUM, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING,
      CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION};
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].state, CUBLAS_STATUS_SUCCESS);
    EXPECT_GT(first[i].wavesCount, 0.f);
    for (auto attr : attrs) EXPECT_EQ(config32(first[i].algo, attr), config32(second[i].algo, attr)) << attr;
  }
  // 4096^2 of 256x128 tiles on 132 SMs: 512 tiles, 3.88 waves, for the first (the widest tile).
  EXPECT_EQ(config32(first[0].algo, CUBLASLT_ALGO_CONFIG_TILE_ID), CUBLASLT_MATMUL_TILE_256x128);
  EXPECT_NEAR(first[0].wavesCount, 512.0 / 132.0, 1e-4);
  EXPECT_EQ(config32(first[0].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM), 1);
  // The 16-bit attributes read back at their own size only.
  std::uint16_t cluster = 0;
  std::int32_t wide = 0;
  std::size_t written = 0;
  EXPECT_EQ(cublasLtMatmulAlgoConfigGetAttribute(&first[0].algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, 2, &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cluster, CUBLASLT_CLUSTER_SHAPE_2x1x1);
  EXPECT_EQ(cublasLtMatmulAlgoConfigGetAttribute(&first[0].algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &wide, 4, &written),
            CUBLAS_STATUS_INVALID_VALUE);
}

TEST_F(LtHeuristic, WorkspaceAndReductionMaskFilterSplitK) {
  const LtShape deep{128, 128, 8192};
  auto splits = [](LtTestProblem& p) {
    std::vector<cublasLtMatmulHeuristicResult_t> r;
    EXPECT_EQ(p.heuristic(r), CUBLAS_STATUS_SUCCESS);
    std::vector<std::pair<std::int32_t, std::size_t>> out;  // (split-K, workspace)
    for (const auto& x : r) out.emplace_back(config32(x.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM), x.workspaceSize);
    return out;
  };
  LtTestProblem p(kBf16, deep);
  const auto all = splits(p);
  bool split_with_workspace = false;
  for (auto [s, ws] : all) split_with_workspace |= s > 1 && ws > 0;
  EXPECT_TRUE(split_with_workspace);
  p.set_workspace(0);
  for (auto [s, ws] : splits(p)) EXPECT_EQ(ws, 0u) << "split-K " << s;
  const std::uint32_t none = 0;
  ASSERT_EQ(cublasLtMatmulPreferenceSetAttribute(p.pref_, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &none, sizeof none),
            CUBLAS_STATUS_SUCCESS);
  p.set_workspace(32u << 20);
  for (auto [s, ws] : splits(p)) EXPECT_EQ(s, 1);
}

}  // namespace
