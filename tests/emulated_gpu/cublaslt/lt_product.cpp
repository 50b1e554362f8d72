// The product on the host. op(A) and op(B) are first copied into rows and columns of the accumulator's
// type (converted exactly, then rounded as the compute type says), so the O(m n k) part is one product
// of contiguous rows and columns. Conversions to the output type use CUDA's own host conversions
// (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h: round to nearest even; fp8 saturating to the finite range).
#include "tests/emulated_gpu/cublaslt/lt_product.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include <cblas.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace gpuscale_emu::lt {

Accumulator accumulator_of(cublasComputeType_t c) {
  switch (c) {
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC: return Accumulator::f64;
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC: return Accumulator::f16;
    case CUBLAS_COMPUTE_32I:
    case CUBLAS_COMPUTE_32I_PEDANTIC: return Accumulator::i32;
    default: return Accumulator::f32;
  }
}

InputRounding rounding_of(cublasComputeType_t c) {
  switch (c) {
    case CUBLAS_COMPUTE_32F_FAST_TF32: return InputRounding::tf32;
    case CUBLAS_COMPUTE_32F_FAST_16BF: return InputRounding::bf16;
    case CUBLAS_COMPUTE_32F_FAST_16F: return InputRounding::fp16;
    default: return InputRounding::none;
  }
}

float round_to_tf32(float x) {
  if (!std::isfinite(x)) return x;
  std::uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = (bits + 0x1000u) & ~0x1fffu;  // add half of the 13 dropped bits' unit (ties away), then drop them
  std::memcpy(&x, &bits, 4);
  return x;
}

namespace {

template <typename T>
T at(const void* base, std::int64_t idx) {
  T v;
  std::memcpy(&v, static_cast<const char*>(base) + idx * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
  return v;
}

double load(const void* base, cudaDataType_t t, std::int64_t idx) {
  switch (t) {
    case CUDA_R_64F: return at<double>(base, idx);
    case CUDA_R_32F: return at<float>(base, idx);
    case CUDA_R_16F: return __half2float(at<__half>(base, idx));
    case CUDA_R_16BF: return __bfloat162float(at<__nv_bfloat16>(base, idx));
    case CUDA_R_8F_E4M3: return static_cast<float>(at<__nv_fp8_e4m3>(base, idx));
    case CUDA_R_8F_E5M2: return static_cast<float>(at<__nv_fp8_e5m2>(base, idx));
    case CUDA_R_8I: return at<std::int8_t>(base, idx);
    case CUDA_R_32I: return at<std::int32_t>(base, idx);
    default: return 0;
  }
}

template <typename T>
void put(void* base, std::int64_t idx, T v) {
  std::memcpy(static_cast<char*>(base) + idx * static_cast<std::int64_t>(sizeof(T)), &v, sizeof(T));
}

void store_float(void* base, cudaDataType_t t, std::int64_t idx, float v) {
  switch (t) {
    case CUDA_R_32F: put(base, idx, v); break;
    case CUDA_R_16F: put(base, idx, __float2half(v)); break;
    case CUDA_R_16BF: put(base, idx, __float2bfloat16(v)); break;
    case CUDA_R_8F_E4M3: put(base, idx, __nv_fp8_e4m3(v)); break;
    case CUDA_R_8F_E5M2: put(base, idx, __nv_fp8_e5m2(v)); break;
    case CUDA_R_8I: {  // IMMA with an 8-bit output: rounded to nearest, saturated to [-128, 127]
      const float r = std::nearbyint(v);
      put(base, idx, static_cast<std::int8_t>(r > 127.f ? 127.f : r < -128.f ? -128.f : r));
      break;
    }
    default: break;
  }
}

float round_input(float x, InputRounding r) {
  switch (r) {
    case InputRounding::tf32: return round_to_tf32(x);
    case InputRounding::bf16: return __bfloat162float(__float2bfloat16(x));
    case InputRounding::fp16: return __half2float(__float2half(x));
    case InputRounding::none: break;
  }
  return x;
}

// Independent partial sums (a fixed order, so results repeat bit for bit) that the compiler can keep
// in vector registers.
template <typename T, typename Sum>
Sum dot(const T* a, const T* b, std::uint64_t k) {
  constexpr int kLanes = 8;
  Sum part[kLanes] = {};
  std::uint64_t p = 0;
  for (; p + kLanes <= k; p += kLanes)
    for (int l = 0; l < kLanes; ++l) part[l] += static_cast<Sum>(a[p + l]) * static_cast<Sum>(b[p + l]);
  Sum s = 0;
  for (int l = 0; l < kLanes; ++l) s += part[l];
  for (; p < k; ++p) s += static_cast<Sum>(a[p]) * static_cast<Sum>(b[p]);
  return s;
}

// CUBLAS_COMPUTE_16F: the accumulator is fp16, rounded after every step.
float dot_f16(const float* a, const float* b, std::uint64_t k) {
  float s = 0;
  for (std::uint64_t p = 0; p < k; ++p) s = __half2float(__float2half(std::fma(a[p], b[p], s)));
  return s;
}

// One input element in the accumulator's type: exact for fp64 and integers, rounded as the compute type
// says for fp32 accumulation.
template <typename T>
T input(const MatrixRef& m, std::int64_t idx, InputRounding r) {
  const double v = load(m.data, m.type, idx);
  if constexpr (std::is_same_v<T, float>)
    return round_input(static_cast<float>(v), r);
  else
    return static_cast<T>(v);
}

// The O(m n k) part: acc[i + j m] = sum over p of rows[i k + p] cols[j k + p], through the C BLAS
// interface the CPU backend also uses (OpenBLAS: blocked for the cache, so the 16384-cubed products of a
// default plan take seconds, not hours). Its summation order is fixed for given sizes, so a product
// repeats bit for bit, as cuBLAS's does for one configuration. Integers go through dgemm, which is exact
// while every partial sum stays below 2^53; the plain loop takes what the BLAS cannot (fp16
// accumulation, sizes past its 32-bit dimensions, integers that could round).
constexpr std::uint64_t kBlasDimMax = 0x7fffffffu;

bool blas_fits(std::uint64_t m, std::uint64_t n, std::uint64_t k) { return m <= kBlasDimMax && n <= kBlasDimMax && k <= kBlasDimMax; }

// `k` terms of each dot product, the rows and columns `ld` apart (a part of K starts `lo` into them).
void blas_product(const float* rows, const float* cols, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                  std::uint64_t ld, float* acc) {
  const auto im = static_cast<blasint>(m), in = static_cast<blasint>(n), ik = static_cast<blasint>(k),
             il = static_cast<blasint>(ld);
  cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, im, in, ik, 1.0f, rows, il, cols, il, 0.0f, acc, im);
}

void blas_product(const double* rows, const double* cols, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                  std::uint64_t ld, double* acc) {
  const auto im = static_cast<blasint>(m), in = static_cast<blasint>(n), ik = static_cast<blasint>(k),
             il = static_cast<blasint>(ld);
  cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, im, in, ik, 1.0, rows, il, cols, il, 0.0, acc, im);
}

// Part `c` of `parts` of the K range [0, k): consecutive, together all of it.
std::pair<std::uint64_t, std::uint64_t> k_part(std::uint64_t k, std::uint64_t parts, std::uint64_t c) {
  return {k * c / parts, k * (c + 1) / parts};
}

// The floating-point product as `parts` partial sums over K, added to the first in order.
template <typename T>
void blas_product_in_parts(const T* rows, const T* cols, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                           std::uint64_t parts, T* acc) {
  std::vector<T> part(parts > 1 ? m * n : 0);
  for (std::uint64_t c = 0; c < parts; ++c) {
    const auto [lo, hi] = k_part(k, parts, c);
    blas_product(rows + lo, cols + lo, m, n, hi - lo, k, c == 0 ? acc : part.data());
    if (c > 0)
      for (std::uint64_t e = 0; e < m * n; ++e) acc[e] += part[e];
  }
}

// Largest magnitude of any element: bounds an integer product's partial sums.
std::int64_t max_magnitude(const std::vector<std::int32_t>& v) {
  std::int64_t top = 0;
  for (const std::int32_t x : v) top = std::max<std::int64_t>(top, x < 0 ? -static_cast<std::int64_t>(x) : x);
  return top;
}

// Every dot product of the batch member, in the accumulator's own type.
template <typename T, typename Sum>
std::vector<Sum> dot_products(const ProductSpec& s, const std::vector<T>& rows, const std::vector<T>& cols) {
  const std::uint64_t m = s.m, n = s.n, k = s.k;
  // Integer sums are exact in any order: one part.
  const std::uint64_t parts = std::is_same_v<T, std::int32_t>
                                  ? 1
                                  : std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max(s.k_parts, 1)),
                                                            std::max<std::uint64_t>(k, 1));
  std::vector<Sum> acc(m * n);
  if constexpr (std::is_same_v<T, float>) {
    if (s.acc == Accumulator::f32 && blas_fits(m, n, k)) {
      blas_product_in_parts(rows.data(), cols.data(), m, n, k, parts, acc.data());
      return acc;
    }
  } else if constexpr (std::is_same_v<T, double>) {
    if (blas_fits(m, n, k)) {
      blas_product_in_parts(rows.data(), cols.data(), m, n, k, parts, acc.data());
      return acc;
    }
  } else {
    const long double bound = static_cast<long double>(max_magnitude(rows)) * static_cast<long double>(max_magnitude(cols)) *
                              static_cast<long double>(k);
    if (blas_fits(m, n, k) && bound < 9007199254740992.0L) {  // 2^53
      const std::vector<double> r(rows.begin(), rows.end()), c(cols.begin(), cols.end());
      std::vector<double> exact(m * n);
      blas_product(r.data(), c.data(), m, n, k, k, exact.data());
      for (std::uint64_t e = 0; e < m * n; ++e) acc[e] = static_cast<Sum>(exact[e]);
      return acc;
    }
  }
  for (std::uint64_t j = 0; j < n; ++j)
    for (std::uint64_t i = 0; i < m; ++i) {
      const T* a = rows.data() + i * k;
      const T* b = cols.data() + j * k;
      if constexpr (std::is_same_v<T, float>) {
        if (s.acc == Accumulator::f16) {
          acc[i + j * m] = dot_f16(a, b, k);  // rounded at every step: one order whatever the parts
          continue;
        }
      }
      Sum sum = 0;
      for (std::uint64_t c = 0; c < parts; ++c) {
        const auto [lo, hi] = k_part(k, parts, c);
        sum += dot<T, Sum>(a + lo, b + lo, hi - lo);
      }
      acc[i + j * m] = sum;
    }
  return acc;
}

template <typename T>
void one_batch(const ProductSpec& s, int batch) {
  const std::int64_t ao = batch * s.a.batch_stride, bo = batch * s.b.batch_stride;
  const std::int64_t co = batch * s.c.batch_stride, dof = batch * s.d.batch_stride;
  const std::uint64_t m = s.m, n = s.n, k = s.k;
  std::vector<T> rows(m * k), cols(n * k);  // op(A)'s rows, op(B)'s columns
  for (std::uint64_t i = 0; i < m; ++i)
    for (std::uint64_t p = 0; p < k; ++p) {
      const auto idx = s.trans_a ? static_cast<std::int64_t>(p + i * s.a.ld) : static_cast<std::int64_t>(i + p * s.a.ld);
      rows[i * k + p] = input<T>(s.a, ao + idx, s.rounding);
    }
  for (std::uint64_t j = 0; j < n; ++j)
    for (std::uint64_t p = 0; p < k; ++p) {
      const auto idx = s.trans_b ? static_cast<std::int64_t>(j + p * s.b.ld) : static_cast<std::int64_t>(p + j * s.b.ld);
      cols[j * k + p] = input<T>(s.b, bo + idx, s.rounding);
    }
  using Sum = std::conditional_t<std::is_same_v<T, std::int32_t>, std::int64_t, T>;
  const std::vector<Sum> acc = dot_products<T, Sum>(s, rows, cols);
  void* out = const_cast<void*>(s.d.data);  // D is the one matrix written
  const bool read_c = s.beta != 0;  // BLAS convention: with beta zero C is not read (NaN in C stays out)
  for (std::uint64_t j = 0; j < n; ++j)
    for (std::uint64_t i = 0; i < m; ++i) {
      const Sum dot_ij = acc[i + j * m];
      const auto ci = co + static_cast<std::int64_t>(i + j * s.c.ld);
      const auto di = dof + static_cast<std::int64_t>(i + j * s.d.ld);
      const double c = read_c ? load(s.c.data, s.c.type, ci) : 0.0;
      if constexpr (std::is_same_v<T, double>) {
        put(out, di, s.alpha * dot_ij + s.beta * c);
      } else if constexpr (std::is_same_v<T, std::int32_t>) {
        if (s.scale_type == CUDA_R_32I) {
          // int32 arithmetic wraps modulo 2^32 (computed unsigned, where overflow is defined)
          const auto r = static_cast<std::uint32_t>(static_cast<std::int64_t>(s.alpha)) * static_cast<std::uint32_t>(dot_ij) +
                         static_cast<std::uint32_t>(static_cast<std::int64_t>(s.beta)) *
                             static_cast<std::uint32_t>(static_cast<std::int64_t>(c));
          put(out, di, static_cast<std::int32_t>(r));
        } else {
          const float r = static_cast<float>(s.alpha) * static_cast<float>(static_cast<std::int32_t>(dot_ij)) +
                          static_cast<float>(s.beta) * static_cast<float>(c);
          store_float(out, s.d.type, di, r);
        }
      } else {
        const float ab = static_cast<float>(s.alpha) * s.scale_a * s.scale_b;
        const float cb = static_cast<float>(s.beta) * s.scale_c;
        store_float(out, s.d.type, di, s.scale_d * (ab * dot_ij + cb * static_cast<float>(c)));
      }
    }
}

}  // namespace

int k_partial_sums(int sm_count) { return (sm_count > 0 ? sm_count : 1) % 7 + 1; }

void compute_product(const ProductSpec& s) {
  for (int b = 0; b < s.batch; ++b) {
    switch (s.acc) {
      case Accumulator::f64: one_batch<double>(s, b); break;
      case Accumulator::i32: one_batch<std::int32_t>(s, b); break;
      case Accumulator::f32:
      case Accumulator::f16: one_batch<float>(s, b); break;
    }
  }
}

}  // namespace gpuscale_emu::lt
