// cublasLtMatmul around the product: FP8 scales, strided batches, the operation it enqueues (its
// duration from the model), the planted bit flip, repeated products computed once, and its refusals.
#include <cstdlib>

#include "tests/emulated_gpu/cublaslt/lt_product_cache.h"
#include "tests/emulated_gpu/cublaslt/tests/lt_test_matrices.h"
#include "tests/emulated_gpu/cublaslt/tests/lt_test_problem.h"

namespace {

constexpr LtTypes kBf16{CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF};
constexpr LtTypes kFp32{CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F};
constexpr LtTypes kFp64{CUBLAS_COMPUTE_64F, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F};

class LtMatmul : public ::testing::Test {
 protected:
  void SetUp() override {
    stand_in::reset();
    unsetenv("GPUSCALE_EMU_FAULTS");
  }
  void TearDown() override { unsetenv("GPUSCALE_EMU_FAULTS"); }
};

void set_pointer(cublasLtMatmulDesc_t op, cublasLtMatmulDescAttributes_t attr, const void* p) {
  ASSERT_EQ(cublasLtMatmulDescSetAttribute(op, attr, &p, sizeof p), CUBLAS_STATUS_SUCCESS);
}

// D = scaleD (alpha scaleA scaleB op(A) op(B) + beta scaleC C) with an e4m3 output: small integers,
// so every step is exact and the expected value is known.
TEST_F(LtMatmul, Fp8ScalesApplyAsDocumented) {
  const LtTypes t{CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_8F_E4M3};
  const LtShape s{16, 16, 16, true, false};
  LtTestProblem p(t, s);
  auto a = random_matrix(CUDA_R_8F_E4M3, 256, 71, false), b = random_matrix(CUDA_R_8F_E4M3, 256, 72, false);
  for (std::size_t i = 0; i < 256; ++i) a.values[i] = test_store(a, i, (i % 3) - 1.0), b.values[i] = test_store(b, i, (i % 5) == 0 ? 1.0 : 0.0);
  TestMatrix c{CUDA_R_16BF, std::vector<unsigned char>(512), std::vector<double>(256)};
  for (std::size_t i = 0; i < 256; ++i) c.values[i] = test_store(c, i, static_cast<double>(i % 4));
  const float scale_a = 2, scale_b = 4, scale_c = 0.5, scale_d = 0.25, alpha = 1, beta = 2;
  set_pointer(p.op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_a);
  set_pointer(p.op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_b);
  set_pointer(p.op_, CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, &scale_c);
  set_pointer(p.op_, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &scale_d);
  std::vector<unsigned char> d(256);
  ASSERT_EQ(p.matmul(&alpha, a.bytes.data(), b.bytes.data(), &beta, c.bytes.data(), d.data()), CUBLAS_STATUS_SUCCESS);
  for (std::uint64_t j = 0; j < 16; ++j)
    for (std::uint64_t i = 0; i < 16; ++i) {
      const auto e = naive_entry(a.values, 16, true, b.values, 16, false, i, j, 16);
      const double want = 0.25 * (1 * 2 * 4 * static_cast<double>(e.value) + 2 * 0.5 * c.values[i + j * 16]);
      EXPECT_EQ(test_load(d.data(), CUDA_R_8F_E4M3, i + j * 16), want) << i << "," << j;  // |want| <= 12: exact in e4m3
    }
}

TEST_F(LtMatmul, StridedBatchesEachAgainstTheirOwnProduct) {
  const LtShape s{12, 10, 8};
  LtTestProblem p(kFp64, s);
  const int batch = 3;
  const std::int64_t sa = 12 * 8 + 5, sb = 0, sc = 12 * 10 + 7;  // padding between members; B shared
  p.set_batch(batch, sa, sb, sc);
  const auto a = random_matrix(CUDA_R_64F, static_cast<std::size_t>(sa * batch), 81, true);
  const auto b = random_matrix(CUDA_R_64F, 8 * 10, 82, true);
  std::vector<double> d(static_cast<std::size_t>(sc * batch), -7.0);
  const double one = 1, zero = 0;
  ASSERT_EQ(p.matmul(&one, a.bytes.data(), b.bytes.data(), &zero, nullptr, d.data()), CUBLAS_STATUS_SUCCESS);
  for (int m = 0; m < batch; ++m) {
    for (std::uint64_t j = 0; j < 10; ++j)
      for (std::uint64_t i = 0; i < 12; ++i)
        EXPECT_EQ(d[static_cast<std::size_t>(m * sc) + i + j * 12],
                  static_cast<double>(naive_entry(a.values, 12, false, b.values, 8, false, i, j, 8, m * sa, 0).value))
            << m << ":" << i << "," << j;
    for (std::int64_t gap = 12 * 10; gap < sc; ++gap) EXPECT_EQ(d[static_cast<std::size_t>(m * sc + gap)], -7.0);  // padding untouched
  }
  ASSERT_EQ(stand_in::operations().size(), 1u);
  EXPECT_NE(stand_in::operations()[0].what.find("batch 3"), std::string::npos);
}

TEST_F(LtMatmul, EnqueuesOneRepeatableOperationTimedByTheModel) {
  const LtShape s{64, 48, 32};
  LtTestProblem p(kBf16, s);
  p.set_batch(2, 64 * 32, 32 * 48, 64 * 48);
  std::vector<unsigned char> a(2 * 64 * 32 * 2), b(2 * 32 * 48 * 2), d(2 * 64 * 48 * 2);
  const float one = 1, zero = 0;
  ASSERT_EQ(p.matmul(&one, a.data(), b.data(), &zero, nullptr, d.data()), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(stand_in::operations().size(), 1u);
  const auto& op = stand_in::operations()[0];
  EXPECT_TRUE(op.repeatable_result);
  EXPECT_NE(op.what.find("bf16"), std::string::npos);
  const double flops = 2.0 * 64 * 48 * 32 * 2;
  EXPECT_DOUBLE_EQ(op.duration_us, flops / (stand_in::kBf16Tflops * 1e12 * stand_in::kGemmEfficiency) * 1e6);
}

TEST_F(LtMatmul, PlantedFlipChangesOneBitOfOneElementOnItsDevice) {
  const LtShape s{16, 8, 8};
  const auto a = random_matrix(CUDA_R_32F, 16 * 8, 91, false), b = random_matrix(CUDA_R_32F, 8 * 8, 92, false);
  const float one = 1, zero = 0;
  auto product = [&](const char* faults) {
    if (faults) setenv("GPUSCALE_EMU_FAULTS", faults, 1);
    LtTestProblem p(kFp32, s);
    std::vector<std::uint32_t> d(16 * 8);
    EXPECT_EQ(p.matmul(&one, a.bytes.data(), b.bytes.data(), &zero, nullptr, d.data()), CUBLAS_STATUS_SUCCESS);
    unsetenv("GPUSCALE_EMU_FAULTS");
    return d;
  };
  const auto clean = product(nullptr);
  const auto flipped = product("slow:0:2,flip-gemm:0:37");
  const auto other_device = product("flip-gemm:1:37");
  EXPECT_EQ(other_device, clean);
  for (std::size_t i = 0; i < clean.size(); ++i) {
    const auto diff = clean[i] ^ flipped[i];
    if (i == 37) {
      EXPECT_EQ(__builtin_popcount(diff), 1);
    } else {
      EXPECT_EQ(diff, 0u) << i;
    }
  }
}

TEST_F(LtMatmul, RepeatedIdenticalProductsAreComputedOnce) {
  LtTestProblem p(kFp32, {16, 16, 16});
  auto a = random_matrix(CUDA_R_32F, 256, 101, false);
  const auto b = random_matrix(CUDA_R_32F, 256, 102, false);
  std::vector<float> d(256);
  const float one = 1, zero = 0;
  auto run = [&] { ASSERT_EQ(p.matmul(&one, a.bytes.data(), b.bytes.data(), &zero, nullptr, d.data()), CUBLAS_STATUS_SUCCESS); };
  const auto before = gpuscale_emu::lt::product_cache_counts();
  auto counted = [&](unsigned long computed, unsigned long skipped, unsigned long restored) {
    const auto now = gpuscale_emu::lt::product_cache_counts();
    EXPECT_EQ(now.computed - before.computed, computed);
    EXPECT_EQ(now.skipped - before.skipped, skipped);
    EXPECT_EQ(now.restored - before.restored, restored);
  };
  run();
  const auto first = d;
  run();
  counted(1, 1, 0);
  EXPECT_EQ(d, first);
  std::vector<float> elsewhere(64);  // a copy into other memory touches neither the inputs nor D
  gpuscale_emu::note_device_write(elsewhere.data(), elsewhere.size() * sizeof(float));
  run();
  counted(1, 2, 0);
  d.assign(256, 0);  // D overwritten (as a collective into it would be): given back from its copy
  gpuscale_emu::note_device_write(d.data() + 7, sizeof(float));
  run();
  counted(1, 2, 1);
  EXPECT_EQ(d, first);
  test_store(a, 5, 0.75);  // one element of A changed (as a copy would): computed again, another result
  gpuscale_emu::note_device_write(a.bytes.data() + 5 * sizeof(float), sizeof(float));
  run();
  counted(2, 2, 1);
  EXPECT_NE(d, first);
  const auto second = d;
  test_store(a, 9, -0.5);  // a kernel changed A, its writes unknown to the log: the contents decide
  gpuscale_emu::note_device_write();
  run();
  counted(3, 2, 1);
  const auto third = d;
  EXPECT_NE(third, second);
  gpuscale_emu::note_device_write();  // nothing changed this time: D given back by the inputs' digest
  d.assign(256, 0);
  run();
  counted(3, 2, 2);
  EXPECT_EQ(d, third);
  auto a2 = a;  // new buffers holding the same values (a new row's): the same D, not computed
  auto b2 = b;
  std::vector<float> d2(256, -1.f);
  ASSERT_EQ(p.matmul(&one, a2.bytes.data(), b2.bytes.data(), &zero, nullptr, d2.data()), CUBLAS_STATUS_SUCCESS);
  counted(3, 2, 3);
  EXPECT_EQ(d2, third);
}

TEST_F(LtMatmul, Refusals) {
  LtTestProblem p(kFp32, {128, 128, 8192});
  std::vector<float> a(128 * 8192), b(8192 * 128), d(128 * 128);
  const float one = 1, zero = 0;
  std::vector<cublasLtMatmulHeuristicResult_t> r;
  ASSERT_EQ(p.heuristic(r), CUBLAS_STATUS_SUCCESS);
  const cublasLtMatmulHeuristicResult_t* needs_ws = nullptr;
  for (const auto& x : r)
    if (x.workspaceSize > 0) needs_ws = &x;
  ASSERT_NE(needs_ws, nullptr);
  // "when workspaceSizeInBytes is less than workspace required by configured algo"
  EXPECT_EQ(cublasLtMatmul(p.handle_, p.op_, &one, a.data(), p.a_, b.data(), p.b_, &zero, nullptr, p.c_, d.data(), p.d_,
                           &needs_ws->algo, p.workspace_.data(), needs_ws->workspaceSize - 1, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);
  // Scale pointers belong to FP8 inputs.
  const float scale = 1;
  set_pointer(p.op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale);
  EXPECT_EQ(cublasLtMatmul(p.handle_, p.op_, &one, a.data(), p.a_, b.data(), p.b_, &zero, nullptr, p.c_, d.data(), p.d_,
                           &r[0].algo, p.workspace_.data(), p.workspace_.size(), nullptr),
            CUBLAS_STATUS_INVALID_VALUE);
  set_pointer(p.op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, nullptr);
  stand_in::set_sticky_error(700);  // cudaErrorIllegalAddress
  EXPECT_EQ(cublasLtMatmul(p.handle_, p.op_, &one, a.data(), p.a_, b.data(), p.b_, &zero, nullptr, p.c_, d.data(), p.d_,
                           &r[0].algo, p.workspace_.data(), p.workspace_.size(), nullptr),
            CUBLAS_STATUS_EXECUTION_FAILED);
  EXPECT_TRUE(stand_in::operations().empty());
}

}  // namespace
