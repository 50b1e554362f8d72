// core/dtype (names, nccl-tests aliases, sizes, epsilon) and core/element_codec (fp16/bf16 rounding,
// typed store/load).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/element_codec.h"
#include "core/error.h"

namespace gpuscale {
namespace {

const DType kAll[] = {DType::fp64,     DType::fp32,     DType::tf32,  DType::fp16, DType::bf16,
                      DType::fp8_e4m3, DType::fp8_e5m2, DType::int32, DType::int8};

TEST(DType, CanonicalNamesRoundTrip) {
  for (DType t : kAll) {
    const auto name = dtype_name(t);
    EXPECT_FALSE(name.empty());
    ASSERT_TRUE(parse_dtype(name).has_value()) << name;
    EXPECT_EQ(*parse_dtype(name), t) << name;
  }
  EXPECT_EQ(dtype_name(DType::bf16), "bf16");
  EXPECT_EQ(dtype_name(DType::fp8_e4m3), "fp8_e4m3");
}

TEST(DType, NcclTestsAliases) {
  const struct {
    const char* alias;
    DType type;
  } cases[] = {{"float", DType::fp32},   {"half", DType::fp16}, {"bfloat16", DType::bf16}, {"double", DType::fp64},
               {"int", DType::int32},    {"char", DType::int8}, {"float32", DType::fp32},  {"float16", DType::fp16},
               {"float64", DType::fp64}, {"i32", DType::int32}, {"i8", DType::int8},       {"e4m3", DType::fp8_e4m3},
               {"e5m2", DType::fp8_e5m2}};
  for (const auto& c : cases) {
    const auto t = parse_dtype(c.alias);
    ASSERT_TRUE(t.has_value()) << c.alias;
    EXPECT_EQ(*t, c.type) << c.alias;
    EXPECT_EQ(parse_dtype_or_throw(c.alias), c.type);
  }
}

TEST(DType, UnknownNames) {
  // "" must not match the empty alias slots of the table.
  for (const char* bad : {"", "fp128", "float8", "int16", "fp32 ", "Float"})
    EXPECT_FALSE(parse_dtype(bad).has_value()) << "'" << bad << "'";
  try {
    parse_dtype_or_throw("fp128");
    FAIL() << "no exception";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'fp128'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("fp32"), std::string::npos) << msg;  // lists the known names
    EXPECT_EQ(e.exit_code(), kExitUsage);
  }
}

TEST(DType, Lists) {
  EXPECT_EQ(parse_dtype_list("float,half,bf16,int"),
            (std::vector<DType>{DType::fp32, DType::fp16, DType::bf16, DType::int32}));
  EXPECT_THROW(parse_dtype_list("fp32,,fp16"), Error);
  EXPECT_THROW(parse_dtype_list(""), Error);
  try {
    parse_dtype_list("fp32,bogus");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'bogus'"), std::string::npos) << e.what();
  }
}

TEST(DType, SizesAndKinds) {
  EXPECT_EQ(dtype_size(DType::fp64), 8u);
  EXPECT_EQ(dtype_size(DType::fp32), 4u);
  EXPECT_EQ(dtype_size(DType::tf32), 4u);
  EXPECT_EQ(dtype_size(DType::fp16), 2u);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_size(DType::fp8_e4m3), 1u);
  EXPECT_EQ(dtype_size(DType::fp8_e5m2), 1u);
  EXPECT_EQ(dtype_size(DType::int32), 4u);
  EXPECT_EQ(dtype_size(DType::int8), 1u);
  for (DType t : kAll) EXPECT_EQ(dtype_is_float(t), t != DType::int32 && t != DType::int8) << dtype_name(t);
}

TEST(DType, EpsilonIsTheUnitRoundoff) {
  EXPECT_EQ(dtype_epsilon(DType::fp64), std::numeric_limits<double>::epsilon() / 2);
  EXPECT_EQ(dtype_epsilon(DType::fp32), std::numeric_limits<float>::epsilon() / 2);
  EXPECT_EQ(dtype_epsilon(DType::fp64), std::ldexp(1.0, -53));
  EXPECT_EQ(dtype_epsilon(DType::fp32), std::ldexp(1.0, -24));
  EXPECT_EQ(dtype_epsilon(DType::tf32), std::ldexp(1.0, -11));
  EXPECT_EQ(dtype_epsilon(DType::fp16), std::ldexp(1.0, -11));
  EXPECT_EQ(dtype_epsilon(DType::bf16), std::ldexp(1.0, -8));
  EXPECT_EQ(dtype_epsilon(DType::fp8_e4m3), std::ldexp(1.0, -4));
  EXPECT_EQ(dtype_epsilon(DType::fp8_e5m2), std::ldexp(1.0, -3));
  EXPECT_EQ(dtype_epsilon(DType::int32), 0.0);
  EXPECT_EQ(dtype_epsilon(DType::int8), 0.0);
}

TEST(DType, ExactIntegerLimits) {
  EXPECT_EQ(dtype_exact_integer_limit(DType::fp64), 9007199254740992.0);
  EXPECT_EQ(dtype_exact_integer_limit(DType::fp32), 16777216.0);
  EXPECT_EQ(dtype_exact_integer_limit(DType::fp16), 2048.0);
  EXPECT_EQ(dtype_exact_integer_limit(DType::bf16), 256.0);
  EXPECT_EQ(dtype_exact_integer_limit(DType::int8), 127.0);
  EXPECT_EQ(dtype_exact_integer_limit(DType::int32), 2147483647.0);
  // The limit is exact and the next integer is not, in the codec's formats.
  EXPECT_EQ(fp16_bits_to_float(float_to_fp16_bits(2048.0f)), 2048.0f);
  EXPECT_NE(fp16_bits_to_float(float_to_fp16_bits(2049.0f)), 2049.0f);
  EXPECT_EQ(bf16_bits_to_float(float_to_bf16_bits(256.0f)), 256.0f);
  EXPECT_NE(bf16_bits_to_float(float_to_bf16_bits(257.0f)), 257.0f);
}

float fp16(float f) { return fp16_bits_to_float(float_to_fp16_bits(f)); }
float bf16(float f) { return bf16_bits_to_float(float_to_bf16_bits(f)); }

TEST(ElementCodec, Fp16HoldsEveryIntegerUpTo2048) {
  for (int i = -2048; i <= 2048; ++i) ASSERT_EQ(fp16(static_cast<float>(i)), static_cast<float>(i)) << i;
}

TEST(ElementCodec, Bf16HoldsEveryIntegerUpTo256) {
  for (int i = -256; i <= 256; ++i) ASSERT_EQ(bf16(static_cast<float>(i)), static_cast<float>(i)) << i;
}

TEST(ElementCodec, Fp16KnownEncodings) {
  EXPECT_EQ(float_to_fp16_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_fp16_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_fp16_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_fp16_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_fp16_bits(0.5f), 0x3800);
  EXPECT_EQ(float_to_fp16_bits(65504.0f), 0x7bff);               // largest finite
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_fp16_bits(INFINITY), 0x7c00);
  EXPECT_EQ(float_to_fp16_bits(-INFINITY), 0xfc00);
  EXPECT_TRUE(std::isnan(fp16(NAN)));
  EXPECT_TRUE(std::isinf(fp16_bits_to_float(0x7c00)));
  EXPECT_EQ(fp16_bits_to_float(0x3555), 0.333251953125f);
}

TEST(ElementCodec, Fp16RoundsToNearestEven) {
  EXPECT_EQ(fp16(2049.0f), 2048.0f);                                        // tie: 2048 has the even mantissa
  EXPECT_EQ(fp16(2051.0f), 2052.0f);                                        // tie: up to the even one
  EXPECT_EQ(fp16(2049.0f + 0.125f), 2050.0f);                               // above the tie: up
  EXPECT_EQ(float_to_fp16_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie at 1 + half ulp: down
  EXPECT_EQ(float_to_fp16_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie at 1 + 1.5 ulp: up
  EXPECT_EQ(float_to_fp16_bits(65519.0f), 0x7bff);                          // below the overflow tie
  EXPECT_EQ(float_to_fp16_bits(65520.0f), 0x7c00);                          // the tie rounds to infinity
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1.0f, -25)), 0x0000);             // subnormal tie: to zero (even)
  EXPECT_EQ(float_to_fp16_bits(3 * std::ldexp(1.0f, -25)), 0x0002);         // subnormal tie: up to even
  EXPECT_EQ(float_to_fp16_bits(-3 * std::ldexp(1.0f, -25)), 0x8002);
}

TEST(ElementCodec, Bf16KnownEncodingsAndRounding) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_bf16_bits(-0.0f), 0x8000);
  EXPECT_EQ(bf16(257.0f), 256.0f);  // tie: even
  EXPECT_EQ(bf16(259.0f), 260.0f);  // tie: even (up)
  EXPECT_EQ(bf16(257.5f), 258.0f);  // above the tie
  EXPECT_EQ(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16(NAN)));
  EXPECT_TRUE(std::isnan(bf16(-NAN)));
  EXPECT_TRUE(std::isinf(bf16(INFINITY)));
}

// Every finite half (and bfloat16) value decodes to a float that encodes back to the same bits.
TEST(ElementCodec, EveryFiniteBitPatternRoundTrips) {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    if ((bits & 0x7c00) != 0x7c00) {
      ASSERT_EQ(float_to_fp16_bits(fp16_bits_to_float(bits)), bits) << std::hex << h;
    }
    if ((bits & 0x7f80) != 0x7f80) {
      ASSERT_EQ(float_to_bf16_bits(bf16_bits_to_float(bits)), bits) << std::hex << h;
    }
  }
}

// For random floats in half's range, the encoding is a nearest representable value.
TEST(ElementCodec, Fp16IsNearest) {
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  for (int i = 0; i < 20000; ++i) {
    const float x = std::ldexp(mant(rng), static_cast<int>(rng() % 41) - 25);  // 2^-25 .. 2^15
    if (x > 65504.0f) continue;
    const std::uint16_t h = float_to_fp16_bits(x);
    const double got = std::fabs(static_cast<double>(fp16_bits_to_float(h)) - x);
    if (h > 0) {
      ASSERT_LE(got, std::fabs(static_cast<double>(fp16_bits_to_float(h - 1)) - x)) << x;
    }
    if (h < 0x7bff) {
      ASSERT_LE(got, std::fabs(static_cast<double>(fp16_bits_to_float(h + 1)) - x)) << x;
    }
  }
}

TEST(ElementCodec, StoreLoadEverySupportedType) {
  std::mt19937_64 rng(29);
  const struct {
    DType type;
    double lo, hi;
  } cases[] = {{DType::fp64, -1e15, 1e15}, {DType::fp32, -16777216, 16777216},
               {DType::tf32, -1e6, 1e6},   {DType::fp16, -2048, 2048},
               {DType::bf16, -256, 256},   {DType::int32, -2147483648.0, 2147483647.0},
               {DType::int8, -128, 127}};
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(dtype_name(c.type)));
    const std::size_t n = 64;
    std::vector<unsigned char> buf(n * dtype_size(c.type), 0xAB);
    std::vector<double> want(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto span = static_cast<std::uint64_t>(c.hi - c.lo) + 1;
      want[i] = c.lo + static_cast<double>(rng() % span);
      store_element(c.type, buf.data(), i, want[i]);
    }
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(load_element(c.type, buf.data(), i), want[i]) << i;
  }
  // The in-memory layout is the type's own.
  std::vector<unsigned char> buf(16);
  store_element(DType::fp32, buf.data(), 1, -3.5);
  float f;
  std::memcpy(&f, buf.data() + 4, 4);
  EXPECT_EQ(f, -3.5f);
  store_element(DType::fp16, buf.data(), 3, 1.0);
  std::uint16_t h;
  std::memcpy(&h, buf.data() + 6, 2);
  EXPECT_EQ(h, 0x3c00);
  store_element(DType::bf16, buf.data(), 0, -2.0);
  std::memcpy(&h, buf.data(), 2);
  EXPECT_EQ(h, 0xc000);
  store_element(DType::int8, buf.data(), 15, -7);
  EXPECT_EQ(static_cast<signed char>(buf[15]), -7);
  // fp16 and bf16 stores round to nearest even.
  store_element(DType::fp16, buf.data(), 0, 2051.0);
  EXPECT_EQ(load_element(DType::fp16, buf.data(), 0), 2052.0);
  store_element(DType::bf16, buf.data(), 0, 257.0);
  EXPECT_EQ(load_element(DType::bf16, buf.data(), 0), 256.0);
}

TEST(ElementCodec, Fp8HasNoHostConversion) {
  std::vector<unsigned char> buf(8);
  for (DType t : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    EXPECT_THROW(store_element(t, buf.data(), 0, 1.0), Error);
    EXPECT_THROW(load_element(t, buf.data(), 0), Error);
  }
}

}  // namespace
}  // namespace gpuscale
