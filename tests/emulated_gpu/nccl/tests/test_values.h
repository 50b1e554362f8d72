#pragma once
// Seeded inputs and an independent oracle for the emulated NCCL's tests (tests only). Every rank's
// input is a function of (seed, rank, index), so each rank computes what any peer sent without asking.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <nccl.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace emu_nccl_test {

inline std::uint64_t mix(std::uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
inline std::uint64_t hash3(std::uint64_t a, std::uint64_t b, std::uint64_t c) { return mix(a ^ mix(b ^ mix(c))); }

inline std::size_t elem_size(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclFloat64: case ncclInt64: case ncclUint64: return 8;
    default: return 4;
  }
}
inline bool is_float(ncclDataType_t t) {
  return t == ncclFloat16 || t == ncclBfloat16 || t == ncclFloat32 || t == ncclFloat64 || t == ncclFloat8e4m3 ||
         t == ncclFloat8e5m2;
}
// Unit roundoff and smallest subnormal of the float types.
inline double unit_roundoff(ncclDataType_t t) {
  switch (t) {
    case ncclFloat64: return std::ldexp(1.0, -53);
    case ncclFloat32: return std::ldexp(1.0, -24);
    case ncclFloat16: return std::ldexp(1.0, -11);
    case ncclBfloat16: return std::ldexp(1.0, -8);
    case ncclFloat8e4m3: return std::ldexp(1.0, -4);
    default: return std::ldexp(1.0, -3);  // e5m2
  }
}

// Inputs are integers in [-range, range], chosen so every sum over 4 ranks stays exact in the type
// (fp8 e5m2 holds integers exactly up to 8), except the integer types, whose sums wrap on purpose.
inline long input_range(ncclDataType_t t) {
  switch (t) {
    case ncclFloat8e4m3: case ncclFloat8e5m2: return 2;
    case ncclFloat16: case ncclBfloat16: return 8;
    case ncclInt8: return 100;
    case ncclInt32: return 1000000000;
    default: return 1000;
  }
}
inline double input(std::uint64_t seed, int rank, std::uint64_t i, ncclDataType_t t, ncclRedOp_t op) {
  const std::uint64_t h = hash3(seed, static_cast<std::uint64_t>(rank), i);
  if (op == ncclProd) return (h & 1) ? 1.0 : -1.0;
  const long r = input_range(t);
  return static_cast<double>(static_cast<long>(h % static_cast<std::uint64_t>(2 * r + 1)) - r);
}

inline void encode(ncclDataType_t t, double v, void* at) {
  switch (t) {
    case ncclInt8: { const auto x = static_cast<std::int8_t>(v); std::memcpy(at, &x, 1); break; }
    case ncclInt32: { const auto x = static_cast<std::int32_t>(v); std::memcpy(at, &x, 4); break; }
    case ncclFloat32: { const auto x = static_cast<float>(v); std::memcpy(at, &x, 4); break; }
    case ncclFloat64: std::memcpy(at, &v, 8); break;
    case ncclFloat16: { const __half x = __double2half(v); std::memcpy(at, &x, 2); break; }
    case ncclBfloat16: { const __nv_bfloat16 x = __double2bfloat16(v); std::memcpy(at, &x, 2); break; }
    case ncclFloat8e4m3: { const __nv_fp8_e4m3 x(v); std::memcpy(at, &x, 1); break; }
    case ncclFloat8e5m2: { const __nv_fp8_e5m2 x(v); std::memcpy(at, &x, 1); break; }
    default: break;
  }
}
inline double decode(ncclDataType_t t, const void* at) {
  switch (t) {
    case ncclInt8: { std::int8_t x; std::memcpy(&x, at, 1); return x; }
    case ncclInt32: { std::int32_t x; std::memcpy(&x, at, 4); return x; }
    case ncclFloat32: { float x; std::memcpy(&x, at, 4); return x; }
    case ncclFloat64: { double x; std::memcpy(&x, at, 8); return x; }
    case ncclFloat16: { __half x; std::memcpy(&x, at, 2); return static_cast<double>(__half2float(x)); }
    case ncclBfloat16: { __nv_bfloat16 x; std::memcpy(&x, at, 2); return static_cast<double>(__bfloat162float(x)); }
    case ncclFloat8e4m3: { __nv_fp8_e4m3 x; std::memcpy(&x, at, 1); return static_cast<double>(static_cast<float>(x)); }
    case ncclFloat8e5m2: { __nv_fp8_e5m2 x; std::memcpy(&x, at, 1); return static_cast<double>(static_cast<float>(x)); }
    default: return 0;
  }
}

struct Expected {
  double value, tolerance;
};
// The reduction over ranks 0..n-1 of element i, from the inputs alone: integer results wrap at the
// type's width, integer avg divides the wrapped sum toward zero; float avg may round (NCCL's
// PreMulSum), within a bound on the inputs' magnitudes.
inline Expected reduced(std::uint64_t seed, int n, std::uint64_t i, ncclDataType_t t, ncclRedOp_t op) {
  long long acc = 0, magnitude = 0;
  for (int r = 0; r < n; ++r) {
    const auto v = static_cast<long long>(input(seed, r, i, t, op));
    magnitude += v < 0 ? -v : v;
    if (r == 0) { acc = v; continue; }
    if (op == ncclSum || op == ncclAvg) acc += v;
    if (op == ncclProd) acc *= v;
    if (op == ncclMax) acc = v > acc ? v : acc;
    if (op == ncclMin) acc = v < acc ? v : acc;
  }
  if (t == ncclInt8) acc = static_cast<std::int8_t>(static_cast<std::uint8_t>(acc & 0xff));
  if (t == ncclInt32) acc = static_cast<std::int32_t>(static_cast<std::uint32_t>(acc & 0xffffffffLL));
  if (op != ncclAvg) return {static_cast<double>(acc), 0};
  if (!is_float(t)) return {static_cast<double>(acc / n), 0};
  const double u = unit_roundoff(t);
  return {static_cast<double>(acc) / n, static_cast<double>(magnitude) * (n + 2) * u + 1e-300};
}

}  // namespace emu_nccl_test
