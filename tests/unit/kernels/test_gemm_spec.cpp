// kernels/gemm_spec: shape parsing and formatting, FLOP counts, layouts, tolerances and the per-entry
// check against a long-double reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "test_seed.h"
#include "core/error.h"
#include "kernels/gemm_spec.h"

namespace gpuscale {
namespace {

void expect_shape(const char* text, std::uint64_t m, std::uint64_t n, std::uint64_t k, bool ta, bool tb) {
  SCOPED_TRACE(text);
  const auto s = parse_gemm_shape(text);
  EXPECT_EQ(s.m, m);
  EXPECT_EQ(s.n, n);
  EXPECT_EQ(s.k, k);
  EXPECT_EQ(s.trans_a, ta);
  EXPECT_EQ(s.trans_b, tb);
}

TEST(GemmShape, Parses) {
  expect_shape("4096", 4096, 4096, 4096, false, false);
  expect_shape("8x16x32", 8, 16, 32, false, false);
  expect_shape("8x16x32:TN", 8, 16, 32, true, false);
  expect_shape("8x16x32:NT", 8, 16, 32, false, true);
  expect_shape("8X16X32:tt", 8, 16, 32, true, true);
  expect_shape("1:NN", 1, 1, 1, false, false);
  expect_shape("65536x1x3", 65536, 1, 3, false, false);
}

TEST(GemmShape, RejectsBadText) {
  for (const char* bad : {"0", "8x", "8x16", "8x16x32:XY", "axb", "", "8x16x32x4", "8x0x4", "8x16x32:", "8x16x32:NNN",
                          "-8", "8,16,32", "8x16x32:N", ":NN", "x8x8", "8xx8x8", "99999999999999999999999"}) {
    SCOPED_TRACE(bad);
    try {
      parse_gemm_shape(bad);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(GemmShape, FormatRoundTrips) {
  EXPECT_EQ(format_gemm_shape(parse_gemm_shape("4096")), "4096x4096x4096:NN");
  EXPECT_EQ(format_gemm_shape(parse_gemm_shape("8x16x32:tn")), "8x16x32:TN");
  std::mt19937_64 rng(43);
  for (int i = 0; i < 300; ++i) {
    GemmShape s{1 + rng() % 100000, 1 + rng() % 100000, 1 + rng() % 100000, rng() % 2 == 1, rng() % 2 == 1};
    const auto back = parse_gemm_shape(format_gemm_shape(s));
    ASSERT_EQ(back.m, s.m);
    ASSERT_EQ(back.n, s.n);
    ASSERT_EQ(back.k, s.k);
    ASSERT_EQ(back.trans_a, s.trans_a);
    ASSERT_EQ(back.trans_b, s.trans_b);
  }
}

TEST(GemmShape, FlopsAreTwoMnkWithoutOverflow) {
  EXPECT_EQ(gemm_flops({65536, 65536, 65536}), 562949953421312.0);  // 2^49
  EXPECT_EQ(gemm_flops({3, 5, 7}), 210.0);
  EXPECT_EQ(gemm_flops({100000, 100000, 100000}), 2e15);
  EXPECT_EQ(gemm_flops({1u << 22, 1u << 22, 1u << 22}), std::ldexp(1.0, 67));  // past 2^64
}

TEST(GemmShape, Layout) {
  EXPECT_EQ(gemm_layout({1, 1, 1, false, false}), "NN");
  EXPECT_EQ(gemm_layout({1, 1, 1, true, false}), "TN");
  EXPECT_EQ(gemm_layout({1, 1, 1, false, true}), "NT");
  EXPECT_EQ(gemm_layout({1, 1, 1, true, true}), "TT");
}

TEST(GemmTolerance, PerType) {
  EXPECT_EQ(gemm_tolerance(DType::int8).output_eps, 0.0);
  EXPECT_EQ(gemm_tolerance(DType::int8).accum_eps, 0.0);
  EXPECT_EQ(gemm_tolerance(DType::fp64).accum_eps, std::ldexp(1.0, -53));
  EXPECT_EQ(gemm_tolerance(DType::fp32).accum_eps, std::ldexp(1.0, -24));
  // tf32 accumulates in fp32; its inputs lose all but 10 mantissa bits inside the multiply.
  EXPECT_EQ(gemm_tolerance(DType::tf32).accum_eps, std::ldexp(1.0, -24));
  EXPECT_EQ(gemm_tolerance(DType::tf32).input_eps, std::ldexp(1.0, -9));
  EXPECT_EQ(gemm_tolerance(DType::fp32).input_eps, 0.0);
  EXPECT_EQ(gemm_tolerance(DType::fp16).output_eps, std::ldexp(1.0, -11));
  EXPECT_EQ(gemm_tolerance(DType::bf16).output_eps, std::ldexp(1.0, -8));
  EXPECT_EQ(gemm_tolerance(DType::bf16).accum_eps, std::ldexp(1.0, -24));  // fp32 accumulation
}

// One entry of C: inputs from the generator, the product summed in fp32 as a GEMM would.
struct Entry {
  std::vector<float> a, b;
  float c = 0;
  std::size_t largest = 0;  // index of the largest |a_p b_p|
};

Entry fp32_entry(std::uint64_t k, std::uint64_t seed) {
  Entry e;
  float best = -1;
  for (std::uint64_t p = 0; p < k; ++p) {
    e.a.push_back(static_cast<float>(gemm_input_value(seed, kMatrixA, p, false)));
    e.b.push_back(static_cast<float>(gemm_input_value(seed, kMatrixB, p, false)));
    e.c += e.a.back() * e.b.back();
    if (std::fabs(e.a.back() * e.b.back()) > best) {
      best = std::fabs(e.a.back() * e.b.back());
      e.largest = p;
    }
  }
  return e;
}

TEST(GemmCheck, AcceptsAnFp32DotProductAndRejectsOneMissingTerm) {
  std::mt19937_64 rng(47);
  for (int trial = 0; trial < 50; ++trial) {
    const std::uint64_t k = 16 + rng() % 2000, seed = rng();
    const auto e = fp32_entry(k, seed);
    auto a = [&](std::uint64_t p) { return e.a[p]; };
    auto b = [&](std::uint64_t p) { return e.b[p]; };
    SCOPED_TRACE(testing::Message() << "k=" << k);
    const auto ok = check_gemm_entry(DType::fp32, k, e.c, a, b);
    EXPECT_TRUE(ok.ok) << ok.error_ratio;
    EXPECT_LT(ok.error_ratio, 1.0);
    // Dropping one term (an indexing bug reads one product too few).
    const float missing = e.c - e.a[e.largest] * e.b[e.largest];
    const auto bad = check_gemm_entry(DType::fp32, k, missing, a, b);
    EXPECT_FALSE(bad.ok);
    EXPECT_GT(bad.error_ratio, 1.0);
    // Off by one term the other way (one product counted twice).
    EXPECT_FALSE(check_gemm_entry(DType::fp32, k, e.c + e.a[e.largest] * e.b[e.largest], a, b).ok);
  }
}

// x to `bits` significant bits, toward zero (the fast-accumulation model's accumulator) or nearest.
double truncate_to_bits(double x, int bits, bool nearest = false) {
  int e = 0;
  const double m = std::ldexp(std::frexp(x, &e), bits);
  return std::ldexp(nearest ? std::nearbyint(m) : std::trunc(m), e - bits);
}

TEST(GemmTolerance, FastAccumulationWidensOnlyFp8) {
  EXPECT_EQ(gemm_tolerance(DType::fp8_e4m3).chunk_eps, 0.0);
  EXPECT_GT(gemm_tolerance(DType::fp8_e4m3, true).chunk_eps, 0.0);
  EXPECT_EQ(gemm_tolerance(DType::bf16, true).chunk_eps, 0.0);  // no such mode outside fp8
  EXPECT_TRUE(gemm_has_fast_accum(DType::fp8_e4m3));
  EXPECT_FALSE(gemm_has_fast_accum(DType::bf16));
}

TEST(GemmCheck, Fp8FastAccumulationPassesItsBoundAndAGrossErrorFails) {
  // fp8 inputs, products added 32 at a time into a 14-bit accumulator truncated after each chunk.
  std::mt19937_64 rng(test_seed());
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::uint64_t k = 4096;
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> a(k), b(k);
    for (std::uint64_t p = 0; p < k; ++p) {
      a[p] = truncate_to_bits(u(rng), 4);  // e4m3 keeps 3 stored + 1 implicit mantissa bits
      b[p] = truncate_to_bits(u(rng), 4);
    }
    double acc = 0, spread = 0;
    for (std::uint64_t c0 = 0; c0 < k; c0 += 32) {
      double chunk = 0;
      for (std::uint64_t p = c0; p < c0 + 32; ++p) chunk += a[p] * b[p];
      acc = truncate_to_bits(acc + chunk, 14);
    }
    for (std::uint64_t p = 0; p < k; ++p) spread += a[p] * b[p] * a[p] * b[p];
    const double c = truncate_to_bits(acc, 8, true);  // bf16 output, rounded
    auto ga = [&](std::uint64_t p) { return a[p]; };
    auto gb = [&](std::uint64_t p) { return b[p]; };
    EXPECT_TRUE(check_gemm_entry(DType::fp8_e4m3, k, c, ga, gb, true).ok) << trial;
    // A quarter of the products' spread off is outside the fast-accumulation bound too.
    EXPECT_FALSE(check_gemm_entry(DType::fp8_e4m3, k, c + 0.25 * std::sqrt(spread), ga, gb, true).ok) << trial;
  }
}

TEST(GemmCheck, Int8IsExact) {
  std::mt19937_64 rng(53);
  for (int trial = 0; trial < 50; ++trial) {
    const std::uint64_t k = 1 + rng() % 4096, seed = rng();
    std::vector<double> a, b;
    long long c = 0;
    for (std::uint64_t p = 0; p < k; ++p) {
      a.push_back(gemm_input_value(seed, kMatrixA, p, true));
      b.push_back(gemm_input_value(seed, kMatrixB, p, true));
      ASSERT_EQ(a.back(), std::round(a.back()));
      ASSERT_LE(std::fabs(a.back()), 8.0);
      c += static_cast<long long>(a.back() * b.back());
    }
    auto ga = [&](std::uint64_t p) { return a[p]; };
    auto gb = [&](std::uint64_t p) { return b[p]; };
    const auto ok = check_gemm_entry(DType::int8, k, static_cast<double>(c), ga, gb);
    EXPECT_TRUE(ok.ok);
    EXPECT_EQ(ok.error_ratio, 0.0);
    const auto bad = check_gemm_entry(DType::int8, k, static_cast<double>(c + 1), ga, gb);
    EXPECT_FALSE(bad.ok);
  }
}

TEST(GemmCheck, SamplePointsIncludeTheCornersAndStayInside) {
  const GemmShape s{300, 7, 50};
  const auto pts = gemm_sample_points(s, 99, 20);
  ASSERT_EQ(pts.size(), 24u);
  EXPECT_EQ(pts[0], (std::pair<std::uint64_t, std::uint64_t>{0, 0}));
  EXPECT_EQ(pts[3], (std::pair<std::uint64_t, std::uint64_t>{299, 6}));
  for (const auto& [i, j] : pts) {
    EXPECT_LT(i, s.m);
    EXPECT_LT(j, s.n);
  }
  EXPECT_EQ(gemm_sample_points(s, 99, 20), pts);  // regenerated from the seed alone
  EXPECT_NE(gemm_sample_points(s, 100, 20), pts);
}

}  // namespace
}  // namespace gpuscale
