#pragma once
// Counter-based random numbers: value = f(seed, stream, index). Every rank and every backend (host or
// GPU code, hence GPUSCALE_HD) regenerates the same inputs from the seed alone, so verification needs no
// copy of the inputs, and inputs are random rather than constant (constant inputs flatter GEMM power
// draw and hide indexing bugs).
#include <cstdint>

#if defined(__CUDACC__)
#define GPUSCALE_HD __host__ __device__
#else
#define GPUSCALE_HD
#endif

namespace gpuscale {

// splitmix64 finaliser: a bijective mix with full avalanche; enough for benchmark inputs.
GPUSCALE_HD inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

GPUSCALE_HD inline std::uint64_t random_bits(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return mix64(mix64(seed ^ mix64(stream)) + index);
}

// Uniform double in [lo, hi) with 53 random bits.
GPUSCALE_HD inline double random_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t index,
                                         double lo, double hi) {
  double u = static_cast<double>(random_bits(seed, stream, index) >> 11) * (1.0 / 9007199254740992.0);
  return lo + (hi - lo) * u;
}

// Uniform integer in [lo, hi] (inclusive).
GPUSCALE_HD inline std::int64_t random_int(std::uint64_t seed, std::uint64_t stream, std::uint64_t index,
                                           std::int64_t lo, std::int64_t hi) {
  std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
  return lo + static_cast<std::int64_t>(random_bits(seed, stream, index) % span);
}

}  // namespace gpuscale
