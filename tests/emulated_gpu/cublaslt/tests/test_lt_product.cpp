// cublasLtMatmul's product at each type against a naive long-double product of the inputs as stored,
// with tolerances from the types: exact for fp64 on small integers and for int8; otherwise the
// output's unit roundoff times |result| plus fp32's per addition times the products' magnitudes.
#include <cmath>

#include "tests/emulated_gpu/cublaslt/tests/lt_test_matrices.h"
#include "tests/emulated_gpu/cublaslt/tests/lt_test_problem.h"

namespace {

struct Case {
  LtTypes t;
  LtShape s;
  bool integers;
  double alpha, beta;
  double out_eps, acc_eps;  // 0, 0: exact
};

std::vector<unsigned char> scalar_bytes(cudaDataType_t t, double v) {
  TestMatrix m{t, std::vector<unsigned char>(test_element_bytes(t)), {}};
  test_store(m, 0, v);
  return m.bytes;
}

// Runs the case and returns the largest |error| / bound (0 for an exact match).
double run_case(const Case& c, std::uint64_t seed) {
  stand_in::reset();
  LtTestProblem p(c.t, c.s);
  const auto& s = c.s;
  const auto a = random_matrix(c.t.a, static_cast<std::size_t>(p.lda) * p.a_cols, seed, c.integers);
  const auto b = random_matrix(c.t.b, static_cast<std::size_t>(p.ldb) * p.b_cols, seed + 1, c.integers);
  const auto cm = random_matrix(c.t.c, static_cast<std::size_t>(p.ldc) * s.n, seed + 2, c.integers);
  std::vector<unsigned char> d(static_cast<std::size_t>(p.ldc) * s.n * test_element_bytes(c.t.d));
  const auto alpha = scalar_bytes(c.t.scale, c.alpha), beta = scalar_bytes(c.t.scale, c.beta);
  EXPECT_EQ(p.matmul(alpha.data(), a.bytes.data(), b.bytes.data(), beta.data(), cm.bytes.data(), d.data()),
            CUBLAS_STATUS_SUCCESS);
  double worst = 0;
  for (std::uint64_t j = 0; j < s.n; ++j)
    for (std::uint64_t i = 0; i < s.m; ++i) {
      const auto e = naive_entry(a.values, p.lda, s.trans_a, b.values, p.ldb, s.trans_b, i, j, s.k);
      const std::size_t at = static_cast<std::size_t>(i + j * static_cast<std::uint64_t>(p.ldc));
      const double cv = cm.values[at];
      const double ref = static_cast<double>(c.alpha * e.value + c.beta * cv);
      const double got = test_load(d.data(), c.t.d, at);
      const double bound = c.out_eps * std::fabs(ref) +
                           c.acc_eps * static_cast<double>(s.k + 4) * (std::fabs(c.alpha) * static_cast<double>(e.magnitude) + std::fabs(c.beta * cv));
      const double err = std::fabs(got - ref);
      if (bound == 0) {
        EXPECT_EQ(got, ref) << "D[" << i << "," << j << "]";
        if (got != ref) worst = INFINITY;
      } else {
        EXPECT_LE(err, bound) << "D[" << i << "," << j << "] = " << got << ", expected " << ref;
        worst = std::max(worst, err / bound);
      }
    }
  return worst;
}

constexpr double kFp32 = 0x1p-24, kBf16 = 0x1p-8, kFp16 = 0x1p-11;

TEST(LtProduct, Fp64IsExactOnSmallIntegersInEveryLayout) {
  const LtTypes t{CUBLAS_COMPUTE_64F, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F};
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      LtShape s{37, 29, 70, ta, tb};
      s.pad = 3;
      run_case({t, s, true, 2, -1, 0, 0}, 11);
    }
}

TEST(LtProduct, Fp32) {
  const LtTypes t{CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F};
  for (bool ta : {false, true}) run_case({t, {37, 29, 300, ta, false, 1}, false, 1.5, 0.5, kFp32, kFp32}, 21);
}

TEST(LtProduct, Bf16AndFp16AccumulateInFp32) {
  const LtTypes bf16{CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF};
  const LtTypes fp16{CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F};
  run_case({bf16, {40, 24, 512, false, true}, false, 1, 0, kBf16, kFp32}, 31);
  run_case({fp16, {40, 24, 512, true, false}, false, 1, 1, kFp16, kFp32}, 32);
  // The output really is rounded to bf16: its errors reach a visible share of bf16's bound.
  EXPECT_GT(run_case({bf16, {40, 24, 512}, false, 1, 0, kBf16, kFp32}, 33), 0.05);
}

TEST(LtProduct, Fp8E4m3WithBf16Output) {
  const LtTypes t{CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF};
  run_case({t, {32, 24, 64, true, false}, false, 1, 0, kBf16, kFp32}, 41);
  const LtTypes mixed{CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, CUDA_R_32F, CUDA_R_32F};
  run_case({mixed, {32, 24, 64, true, false}, false, 0.5, 2, kFp32, kFp32}, 42);
}

TEST(LtProduct, Int8IsExactInInt32) {
  const LtTypes t{CUBLAS_COMPUTE_32I, CUDA_R_32I, CUDA_R_8I, CUDA_R_8I, CUDA_R_32I, CUDA_R_32I};
  run_case({t, {32, 30, 128, true, false}, true, 3, 1, 0, 0}, 51);
}

// tf32: the multiply rounds each fp32 input to 10 mantissa bits. The oracle rounds them itself
// (frexp/round: nearest, ties away), and the result must be off the plain fp32 product.
double tf32_of(double x) {
  int e = 0;
  const double m = std::frexp(x, &e);  // |m| in [0.5, 1): 11 significant bits = 10 stored
  return std::ldexp(std::round(std::ldexp(m, 11)), e - 11);
}

TEST(LtProduct, Tf32RoundsInputsTo10MantissaBits) {
  stand_in::reset();
  const LtTypes t{CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F};
  const LtShape s{33, 17, 256};
  LtTestProblem p(t, s);
  const auto a = random_matrix(CUDA_R_32F, s.m * s.k, 61, false), b = random_matrix(CUDA_R_32F, s.k * s.n, 62, false);
  std::vector<float> d(s.m * s.n);
  const float one = 1, zero = 0;
  ASSERT_EQ(p.matmul(&one, a.bytes.data(), b.bytes.data(), &zero, nullptr, d.data()), CUBLAS_STATUS_SUCCESS);
  std::vector<double> at(a.values), bt(b.values);
  for (auto& v : at) v = tf32_of(v);
  for (auto& v : bt) v = tf32_of(v);
  double off_fp32 = 0;
  for (std::uint64_t j = 0; j < s.n; ++j)
    for (std::uint64_t i = 0; i < s.m; ++i) {
      const auto e = naive_entry(at, p.lda, false, bt, p.ldb, false, i, j, s.k);
      const auto plain = naive_entry(a.values, p.lda, false, b.values, p.ldb, false, i, j, s.k);
      const double got = d[i + j * s.m];
      const double bound = kFp32 * std::fabs(static_cast<double>(e.value)) + kFp32 * (s.k + 4) * static_cast<double>(e.magnitude);
      EXPECT_LE(std::fabs(got - static_cast<double>(e.value)), bound) << i << "," << j;
      off_fp32 = std::max(off_fp32, std::fabs(got - static_cast<double>(plain.value)) / bound);
    }
  EXPECT_GT(off_fp32, 1.0);  // the tf32 rounding is visible beyond fp32's own error
}

}  // namespace
