#include "core/element_codec.h"

#include <cmath>

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale {

std::uint16_t float_to_bf16_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return static_cast<std::uint16_t>(u >> 16);
}

float bf16_bits_to_float(std::uint16_t b) {
  std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::uint16_t float_to_fp16_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);  // NaN
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {                                                    // subnormal or zero in fp16
    // value = abs_float; fp16 subnormal unit is 2^-24
    float a;
    std::memcpy(&a, &abs, 4);
    const auto q = static_cast<std::uint32_t>(std::nearbyint(a * 16777216.0f));  // round-half-even (default mode)
    return static_cast<std::uint16_t>(sign | q);
  }
  std::uint32_t exp = (abs >> 23) - 127 + 15;
  std::uint32_t mant = abs & 0x7fffffu;
  std::uint32_t half = (exp << 10) | (mant >> 13);
  const std::uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // round to nearest even
  return static_cast<std::uint16_t>(sign | half);
}

float fp16_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  float mag;
  if (exp == 0) {
    mag = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    mag = mant ? NAN : INFINITY;
  } else {
    mag = std::ldexp(static_cast<float>(mant | 0x400u), static_cast<int>(exp) - 25);
  }
  std::uint32_t u;
  std::memcpy(&u, &mag, 4);
  u |= sign;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

namespace {

// The table's host codecs (core/dtype_table.def, GPUSCALE_DTYPE_HOST): plain is a C++ cast.
template <typename T>
T plain_encode(double v) {
  return static_cast<T>(v);
}
template <typename T>
double plain_decode(T x) {
  return static_cast<double>(x);
}
template <typename T>
T fp16_bits_encode(double v) {
  return float_to_fp16_bits(static_cast<float>(v));
}
template <typename T>
double fp16_bits_decode(T x) {
  return fp16_bits_to_float(x);
}
template <typename T>
T bf16_bits_encode(double v) {
  return float_to_bf16_bits(static_cast<float>(v));
}
template <typename T>
double bf16_bits_decode(T x) {
  return bf16_bits_to_float(x);
}

}  // namespace

void store_element(DType type, void* buffer, std::uint64_t i, double v) {
  switch (type) {
#define GPUSCALE_DTYPE_HOST(id, storage, codec) \
  case DType::id: static_cast<storage*>(buffer)[i] = codec##_encode<storage>(v); return;
#include "core/dtype_table.def"
    default: break;
  }
  throw Error(fmt::format("no host conversion for {} elements", dtype_name(type)));
}

double load_element(DType type, const void* buffer, std::uint64_t i) {
  switch (type) {
#define GPUSCALE_DTYPE_HOST(id, storage, codec) \
  case DType::id: return codec##_decode<storage>(static_cast<const storage*>(buffer)[i]);
#include "core/dtype_table.def"
    default: break;
  }
  throw Error(fmt::format("no host conversion for {} elements", dtype_name(type)));
}

}  // namespace gpuscale
