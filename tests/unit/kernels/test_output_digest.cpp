// kernels/output_digest: equal outputs give equal digests, one flipped bit changes exactly its block,
// the blocks cover every element once, and the values fit 48 bits (exact as doubles).
#include <gtest/gtest.h>

#include <random>

#include "kernels/output_digest.h"

namespace gpuscale {
namespace {

TEST(OutputDigest, OneFlippedBitChangesItsBlockOnly) {
  std::mt19937_64 gen(11);
  for (std::uint64_t n : {1ULL, 63ULL, 64ULL, 1000ULL, 1024ULL * 1024}) {
    std::vector<double> c(n);
    for (auto& x : c) x = std::uniform_real_distribution<double>(-1, 1)(gen);
    const auto before = block_digests(c.data(), n, sizeof(double));
    ASSERT_EQ(before.size(), std::min<std::uint64_t>(n, kDigestBlocks));
    EXPECT_EQ(block_digests(c.data(), n, sizeof(double)), before);
    const std::uint64_t pick = gen();
    flip_one_bit(c.data(), n, sizeof(double), pick);
    const auto after = block_digests(c.data(), n, sizeof(double));
    const std::uint64_t element = pick % n;
    int changed = 0;
    for (std::size_t b = 0; b < before.size(); ++b) {
      const auto r = digest_block_range(n, static_cast<int>(before.size()), static_cast<int>(b));
      const bool holds = r.first <= element && element < r.last;
      EXPECT_EQ(before[b] != after[b], holds) << n << " block " << b;
      changed += before[b] != after[b];
      EXPECT_LE(before[b], kDigestMask);
    }
    EXPECT_EQ(changed, 1);
  }
}

TEST(OutputDigest, BlocksCoverEveryElementOnce) {
  for (std::uint64_t n : {5ULL, 64ULL, 100ULL, 8192ULL * 8192}) {
    const int blocks = static_cast<int>(std::min<std::uint64_t>(n, kDigestBlocks));
    std::uint64_t next = 0;
    for (int b = 0; b < blocks; ++b) {
      const auto r = digest_block_range(n, blocks, b);
      EXPECT_EQ(r.first, next);
      EXPECT_GT(r.last, r.first);
      next = r.last;
    }
    EXPECT_EQ(next, n);
  }
  EXPECT_NE(text_digest("cblas dgemm"), text_digest("cblas sgemm"));
  EXPECT_LE(text_digest("x"), kDigestMask);
}

}  // namespace
}  // namespace gpuscale
