// The descriptors hold what is set, refuse sizes that do not match cublasLt.h's types, and read back.
#include <cstring>

#include "tests/emulated_gpu/cublaslt/tests/lt_test_problem.h"

namespace {

class LtDescriptors : public ::testing::Test {
 protected:
  void SetUp() override { stand_in::reset(); }
};

TEST_F(LtDescriptors, BadAttributeSizesAreInvalidValues) {
  cublasLtMatmulDesc_t op = nullptr;
  ASSERT_EQ(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  const std::int64_t wide = CUBLAS_OP_T;
  EXPECT_EQ(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &wide, sizeof wide), CUBLAS_STATUS_INVALID_VALUE);
  const std::int32_t fast = 1;  // FAST_ACCUM is int8_t
  EXPECT_EQ(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, nullptr, 4), CUBLAS_STATUS_INVALID_VALUE);
  cublasLtMatmulDescDestroy(op);

  cublasLtMatrixLayout_t l = nullptr;
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&l, CUDA_R_16BF, 8, 8, 8), CUBLAS_STATUS_SUCCESS);
  const std::int64_t count = 2;  // BATCH_COUNT is int32_t
  EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count), CUBLAS_STATUS_INVALID_VALUE);
  const std::int32_t stride = 64;  // STRIDED_BATCH_OFFSET is int64_t
  EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
            CUBLAS_STATUS_INVALID_VALUE);
  cublasLtMatrixLayoutDestroy(l);

  cublasLtMatmulPreference_t p = nullptr;
  ASSERT_EQ(cublasLtMatmulPreferenceCreate(&p), CUBLAS_STATUS_SUCCESS);
  const std::uint32_t ws = 1024;  // MAX_WORKSPACE_BYTES is uint64_t
  EXPECT_EQ(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
            CUBLAS_STATUS_INVALID_VALUE);
  cublasLtMatmulPreferenceDestroy(p);
}

TEST_F(LtDescriptors, AttributesReadBackAsSet) {
  cublasLtMatmulDesc_t op = nullptr;
  ASSERT_EQ(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  std::int32_t compute = 0, trans = 0;
  std::size_t written = 0;
  ASSERT_EQ(cublasLtMatmulDescGetAttribute(op, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute, 4, &written), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(compute, CUBLAS_COMPUTE_32F_FAST_TF32);
  ASSERT_EQ(cublasLtMatmulDescGetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, 4, &written), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(trans, CUBLAS_OP_N);  // the documented default
  const std::int32_t t = CUBLAS_OP_T;
  ASSERT_EQ(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &t, sizeof t), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasLtMatmulDescGetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &trans, 4, &written), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(trans, CUBLAS_OP_T);
  float scale = 2;
  const void* ptr = &scale;
  ASSERT_EQ(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &ptr, sizeof ptr), CUBLAS_STATUS_SUCCESS);
  const void* back = nullptr;
  ASSERT_EQ(cublasLtMatmulDescGetAttribute(op, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &back, sizeof back, &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(back, ptr);
  // sizeInBytes 0: the size needed; 0 without sizeWritten: invalid.
  ASSERT_EQ(cublasLtMatmulDescGetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, nullptr, 0, &written), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(written, 1u);
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, nullptr, 0, nullptr), CUBLAS_STATUS_INVALID_VALUE);
  cublasLtMatmulDescDestroy(op);

  cublasLtMatrixLayout_t l = nullptr;
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&l, CUDA_R_8F_E4M3, 64, 32, 80), CUBLAS_STATUS_SUCCESS);
  const std::int32_t count = 3;
  const std::int64_t stride = 80 * 32 + 16;
  ASSERT_EQ(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
            CUBLAS_STATUS_SUCCESS);
  std::int32_t count_back = 0;
  std::int64_t stride_back = 0, ld = 0;
  std::uint64_t rows = 0;
  EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count_back, 4, &written), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride_back, 8, &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(l, CUBLASLT_MATRIX_LAYOUT_LD, &ld, 8, &written), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatrixLayoutGetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, 8, &written), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(count_back, 3);
  EXPECT_EQ(stride_back, stride);
  EXPECT_EQ(ld, 80);
  EXPECT_EQ(rows, 64u);
  cublasLtMatrixLayoutDestroy(l);
}

TEST_F(LtDescriptors, StatusNamesAndVersion) {
  EXPECT_STREQ(cublasLtGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED");
  EXPECT_STREQ(cublasLtGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE");
  EXPECT_GT(std::strlen(cublasLtGetStatusString(CUBLAS_STATUS_EXECUTION_FAILED)), 0u);
  EXPECT_EQ(cublasLtGetVersion() / 10000, 13u);  // the CUDA 13 headers' library
}

}  // namespace
