// Tolerance and verification logic every device uses (kernels/gemm_spec.h, kernels/stream_verify.h):
// right answers pass, wrong ones (by more than rounding) fail.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/element_codec.h"
#include "kernels/stream_verify.h"

namespace gpuscale {
namespace {

// A dot product of k random products as the GPU would see it, and its exact value.
struct Row {
  std::vector<double> a, b;
  double exact = 0;
};
Row make_row(std::uint64_t k, bool integer) {
  Row r;
  for (std::uint64_t p = 0; p < k; ++p) {
    r.a.push_back(gemm_input_value(1, kMatrixA, p, integer));
    r.b.push_back(gemm_input_value(1, kMatrixB, p, integer));
    r.exact += r.a.back() * r.b.back();
  }
  return r;
}

GemmEntryCheck check(DType t, const Row& r, double c) {
  return check_gemm_entry(t, r.a.size(), c, [&](std::uint64_t p) { return r.a[p]; }, [&](std::uint64_t p) { return r.b[p]; });
}

TEST(GemmTolerance, RoundedOutputsPassWrongOnesFail) {
  const auto r = make_row(8192, false);
  // bf16 output: the exact sum rounded to bf16 passes; off by a bf16 unit of a typical product's size fails.
  const double bf16 = bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(r.exact)));
  EXPECT_TRUE(check(DType::bf16, r, bf16).ok);
  EXPECT_TRUE(check(DType::fp8_e4m3, r, bf16).ok);
  EXPECT_FALSE(check(DType::bf16, r, r.exact + 1.0).ok);
  EXPECT_FALSE(check(DType::bf16, r, -r.exact).ok);
  // fp16 output.
  EXPECT_TRUE(check(DType::fp16, r, fp16_bits_to_float(float_to_fp16_bits(static_cast<float>(r.exact)))).ok);
  // fp32 and fp64 outputs.
  EXPECT_TRUE(check(DType::fp32, r, static_cast<float>(r.exact)).ok);
  EXPECT_FALSE(check(DType::fp32, r, r.exact * (1 + 1e-3)).ok);
  EXPECT_TRUE(check(DType::fp64, r, r.exact).ok);
  EXPECT_FALSE(check(DType::fp64, r, r.exact + 1e-6).ok);
  EXPECT_FALSE(check(DType::fp32, r, NAN).ok);
}

// A tf32 GEMM multiplies inputs truncated to 10 mantissa bits: that result passes, a wrong one fails.
TEST(GemmTolerance, Tf32AllowsItsInputRoundingAndNoMore) {
  auto tf32 = [](double v) {  // truncate an fp32 value to tf32 (the worse of truncation and rounding)
    float f = static_cast<float>(v);
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits &= ~((1u << 13) - 1);
    std::memcpy(&f, &bits, 4);
    return static_cast<double>(f);
  };
  for (std::uint64_t k : {64u, 4096u, 16384u}) {
    const auto r = make_row(k, false);
    double gpu = 0;
    for (std::uint64_t p = 0; p < k; ++p) gpu += tf32(r.a[p]) * tf32(r.b[p]);
    EXPECT_TRUE(check(DType::tf32, r, static_cast<float>(gpu)).ok) << k;
    EXPECT_FALSE(check(DType::tf32, r, 0.0).ok) << k;               // nothing computed
    EXPECT_FALSE(check(DType::tf32, r, r.exact * 1.05 + 0.5).ok) << k;
  }
}

TEST(GemmTolerance, Int8IsExact) {
  const auto r = make_row(4096, true);
  EXPECT_EQ(r.exact, std::round(r.exact));
  EXPECT_TRUE(check(DType::int8, r, r.exact).ok);
  EXPECT_FALSE(check(DType::int8, r, r.exact + 1).ok);
}

TEST(GemmSamples, CornersFirstAndInsideTheMatrix) {
  const GemmShape s{100, 7, 3};
  const auto pts = gemm_sample_points(s, 5, 50);
  ASSERT_EQ(pts.size(), 54u);
  EXPECT_EQ(pts[0], std::make_pair(std::uint64_t{0}, std::uint64_t{0}));
  EXPECT_EQ(pts[3], std::make_pair(std::uint64_t{99}, std::uint64_t{6}));
  for (auto [i, j] : pts) {
    EXPECT_LT(i, s.m);
    EXPECT_LT(j, s.n);
  }
}

TEST(StreamVerify, EveryElementChecked) {
  const std::uint64_t n = 1000, seed = 9;
  std::vector<double> out(n);
  const StreamInputs<double> in{seed};
  for (std::uint64_t i = 0; i < n; ++i) out[i] = stream_expected_element(StreamOp::triad, in, i);
  EXPECT_EQ(verify_stream_elements<double>(StreamOp::triad, out.data(), n, seed).wrong, 0u);
  out[997] += 1e-12;  // more than two units of roundoff
  auto r = verify_stream_elements<double>(StreamOp::triad, out.data(), n, seed);
  EXPECT_EQ(r.wrong, 1u);
  EXPECT_NE(r.detail.find("[997]"), std::string::npos) << r.detail;
  out[3] = NAN;
  EXPECT_EQ(verify_stream_elements<double>(StreamOp::triad, out.data(), n, seed).wrong, 2u);
  // A fused multiply-add rounds once: within tolerance.
  std::vector<float> f(n);
  const StreamInputs<float> fin{seed};
  for (std::uint64_t i = 0; i < n; ++i) f[i] = std::fma(0.4f, fin.c(i), fin.b(i));
  EXPECT_EQ(verify_stream_elements<float>(StreamOp::triad, f.data(), n, seed).wrong, 0u);
}

TEST(StreamVerify, SumsWithinParallelRounding) {
  const std::uint64_t n = 1 << 16, seed = 4;
  const StreamInputs<float> in{seed};
  double exact = 0;
  for (std::uint64_t i = 0; i < n; ++i) exact += static_cast<double>(in.a(i)) * static_cast<double>(in.b(i));
  EXPECT_EQ(verify_stream_sum<float>(StreamOp::dot, exact, n, seed).wrong, 0u);
  EXPECT_EQ(verify_stream_sum<float>(StreamOp::dot, exact * (1 + 1e-7), n, seed).wrong, 0u);
  EXPECT_EQ(verify_stream_sum<float>(StreamOp::dot, exact * 1.001, n, seed).wrong, 1u);
  EXPECT_EQ(verify_stream_sum<float>(StreamOp::read, exact, n, seed).wrong, 1u);  // the wrong kernel's sum
}

}  // namespace
}  // namespace gpuscale
