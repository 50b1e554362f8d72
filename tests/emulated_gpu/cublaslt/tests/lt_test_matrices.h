#pragma once
// Seeded random matrices stored in a cuBLASLt type, with the values as stored (decoded by CUDA's own
// host conversions), and the naive long-double product the tests judge the emulation by.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

struct TestMatrix {
  cudaDataType_t type;
  std::vector<unsigned char> bytes;
  std::vector<double> values;  // as stored
};

inline std::size_t test_element_bytes(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_64F: return 8;
    case CUDA_R_32F: case CUDA_R_32I: return 4;
    case CUDA_R_16F: case CUDA_R_16BF: return 2;
    default: return 1;
  }
}

// Stores v as `t` at element i and returns the value stored.
inline double test_store(TestMatrix& m, std::size_t i, double v) {
  unsigned char* p = m.bytes.data() + i * test_element_bytes(m.type);
  switch (m.type) {
    case CUDA_R_64F: std::memcpy(p, &v, 8); return v;
    case CUDA_R_32F: { const float f = static_cast<float>(v); std::memcpy(p, &f, 4); return f; }
    case CUDA_R_32I: { const auto x = static_cast<std::int32_t>(v); std::memcpy(p, &x, 4); return x; }
    case CUDA_R_16F: { const __half h = __float2half(static_cast<float>(v)); std::memcpy(p, &h, 2); return __half2float(h); }
    case CUDA_R_16BF: { const auto h = __float2bfloat16(static_cast<float>(v)); std::memcpy(p, &h, 2); return __bfloat162float(h); }
    case CUDA_R_8F_E4M3: { const __nv_fp8_e4m3 h(static_cast<float>(v)); std::memcpy(p, &h, 1); return static_cast<float>(h); }
    case CUDA_R_8F_E5M2: { const __nv_fp8_e5m2 h(static_cast<float>(v)); std::memcpy(p, &h, 1); return static_cast<float>(h); }
    case CUDA_R_8I: { const auto x = static_cast<std::int8_t>(v); std::memcpy(p, &x, 1); return x; }
    default: return 0;
  }
}

inline double test_load(const void* data, cudaDataType_t t, std::size_t i) {
  const unsigned char* p = static_cast<const unsigned char*>(data) + i * test_element_bytes(t);
  switch (t) {
    case CUDA_R_64F: { double v; std::memcpy(&v, p, 8); return v; }
    case CUDA_R_32F: { float v; std::memcpy(&v, p, 4); return v; }
    case CUDA_R_32I: { std::int32_t v; std::memcpy(&v, p, 4); return v; }
    case CUDA_R_16F: { __half v; std::memcpy(&v, p, 2); return __half2float(v); }
    case CUDA_R_16BF: { __nv_bfloat16 v; std::memcpy(&v, p, 2); return __bfloat162float(v); }
    case CUDA_R_8F_E4M3: { __nv_fp8_e4m3 v; std::memcpy(&v, p, 1); return static_cast<float>(v); }
    case CUDA_R_8F_E5M2: { __nv_fp8_e5m2 v; std::memcpy(&v, p, 1); return static_cast<float>(v); }
    case CUDA_R_8I: { std::int8_t v; std::memcpy(&v, p, 1); return v; }
    default: return 0;
  }
}

// `count` elements: uniform in [-1, 1), or integers in [-8, 8].
inline TestMatrix random_matrix(cudaDataType_t t, std::size_t count, std::uint64_t seed, bool integers) {
  TestMatrix m{t, std::vector<unsigned char>(count * test_element_bytes(t)), std::vector<double>(count)};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-1, 1);
  std::uniform_int_distribution<int> whole(-8, 8);
  for (std::size_t i = 0; i < count; ++i) m.values[i] = test_store(m, i, integers ? whole(rng) : real(rng));
  return m;
}

// sum_p op(A)[i][p] op(B)[p][j] in long double, and sum |products| (the accumulation's scale).
struct NaiveEntry {
  long double value, magnitude;
};
inline NaiveEntry naive_entry(const std::vector<double>& a, std::int64_t lda, bool ta, const std::vector<double>& b,
                              std::int64_t ldb, bool tb, std::uint64_t i, std::uint64_t j, std::uint64_t k,
                              std::int64_t a_off = 0, std::int64_t b_off = 0) {
  NaiveEntry e{0, 0};
  for (std::uint64_t p = 0; p < k; ++p) {
    const long double x = a[static_cast<std::size_t>(a_off + (ta ? static_cast<std::int64_t>(p + i * lda) : static_cast<std::int64_t>(i + p * lda)))];
    const long double y = b[static_cast<std::size_t>(b_off + (tb ? static_cast<std::int64_t>(j + p * ldb) : static_cast<std::int64_t>(p + j * ldb)))];
    e.value += x * y;
    e.magnitude += std::fabs(x * y);
  }
  return e;
}
