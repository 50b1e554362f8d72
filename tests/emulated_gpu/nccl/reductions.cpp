#include "tests/emulated_gpu/nccl/reductions.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>
#include <vector>

namespace emu_nccl {
namespace {

// How each storage type turns into the arithmetic type and back (rounding to nearest even, as the
// CUDA host conversions __float2half_rn, __float2bfloat16_rn and __nv_cvt_float_to_fp8 do).
template <class T>
struct Arith {  // plain C++ types: computed in themselves (integers through their unsigned twin, so they wrap)
  using A = T;
  static A load(T v) { return v; }
  static T store(A v) { return v; }
};
template <>
struct Arith<__half> {
  using A = float;
  static A load(__half v) { return __half2float(v); }
  static __half store(A v) { return __float2half_rn(v); }
};
template <>
struct Arith<__nv_bfloat16> {
  using A = float;
  static A load(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __nv_bfloat16 store(A v) { return __float2bfloat16_rn(v); }
};
template <>
struct Arith<__nv_fp8_e4m3> {
  using A = float;
  static A load(__nv_fp8_e4m3 v) { return static_cast<float>(v); }
  static __nv_fp8_e4m3 store(A v) { return __nv_fp8_e4m3(v); }  // satfinite, round to nearest even
};
template <>
struct Arith<__nv_fp8_e5m2> {
  using A = float;
  static A load(__nv_fp8_e5m2 v) { return static_cast<float>(v); }
  static __nv_fp8_e5m2 store(A v) { return __nv_fp8_e5m2(v); }
};

template <class A>
A wrap_add(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <class A>
A wrap_mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    // Promote to at least unsigned int so a narrow product does not turn into signed int arithmetic.
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return static_cast<A>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
  } else {
    return a * b;
  }
}

template <class T>
void reduce_typed(ncclRedOp_t op, int n, const void* const* inputs, void* out, std::size_t count) {
  using Ar = Arith<T>;
  using A = typename Ar::A;
  constexpr bool is_float = !std::is_integral_v<T>;
  // PreMulSum's scalar: 1/n rounded to the type (float avg).
  const A scale = is_float ? Ar::load(Ar::store(static_cast<A>(1.0 / n))) : A(1);
  auto* o = static_cast<T*>(out);
  for (std::size_t i = 0; i < count; ++i) {
    auto in = [&](int r) { return Ar::load(static_cast<const T*>(inputs[r])[i]); };
    // Each step is stored to the type and loaded back: NCCL keeps the running value in the type.
    auto round = [](A v) { return Ar::load(Ar::store(v)); };
    A acc = (op == ncclAvg && is_float) ? round(in(0) * scale) : in(0);
    for (int r = 1; r < n; ++r) {
      const A v = in(r);
      switch (op) {
        case ncclSum: acc = round(wrap_add(acc, v)); break;
        case ncclProd: acc = round(wrap_mul(acc, v)); break;
        case ncclMax: acc = v > acc ? v : acc; break;
        case ncclMin: acc = v < acc ? v : acc; break;
        case ncclAvg: acc = is_float ? round(acc + round(v * scale)) : wrap_add(acc, v); break;
        default: break;
      }
    }
    if constexpr (!is_float) {
      if (op == ncclAvg) acc = static_cast<A>(acc / static_cast<A>(n));  // toward zero
    }
    o[i] = Ar::store(acc);
  }
}

}  // namespace

std::size_t type_size(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
  }
}

bool builtin_op(ncclRedOp_t op) { return op >= ncclSum && op <= ncclAvg; }

void reduce_ranks(ncclDataType_t t, ncclRedOp_t op, int n, const void* const* inputs, void* out, std::size_t count) {
  switch (t) {
    case ncclInt8: return reduce_typed<std::int8_t>(op, n, inputs, out, count);
    case ncclUint8: return reduce_typed<std::uint8_t>(op, n, inputs, out, count);
    case ncclInt32: return reduce_typed<std::int32_t>(op, n, inputs, out, count);
    case ncclUint32: return reduce_typed<std::uint32_t>(op, n, inputs, out, count);
    case ncclInt64: return reduce_typed<std::int64_t>(op, n, inputs, out, count);
    case ncclUint64: return reduce_typed<std::uint64_t>(op, n, inputs, out, count);
    case ncclFloat16: return reduce_typed<__half>(op, n, inputs, out, count);
    case ncclBfloat16: return reduce_typed<__nv_bfloat16>(op, n, inputs, out, count);
    case ncclFloat32: return reduce_typed<float>(op, n, inputs, out, count);
    case ncclFloat64: return reduce_typed<double>(op, n, inputs, out, count);
    case ncclFloat8e4m3: return reduce_typed<__nv_fp8_e4m3>(op, n, inputs, out, count);
    case ncclFloat8e5m2: return reduce_typed<__nv_fp8_e5m2>(op, n, inputs, out, count);
    default: return;
  }
}

}  // namespace emu_nccl
