// backends/cpu/link_probe: the CPU link peak is measured at a size beyond the caches (4x the last-level
// cache, within bounds and within the memory available), as the median of several copies.
#include <gtest/gtest.h>

#include <random>

#include "test_seed.h"
#include "backends/cpu/link_probe.h"

namespace gpuscale {
namespace {

constexpr std::uint64_t MiB = 1ULL << 20;

TEST(LinkProbe, SizeIsFourTimesTheLastLevelCacheWithinBounds) {
  std::mt19937_64 rng(test_seed());
  const std::uint64_t llc = std::uniform_int_distribution<std::uint64_t>(17, 255)(rng) * MiB;  // 4x in 64M..1G
  EXPECT_EQ(link_probe_bytes(llc, 0), 4 * llc);
  EXPECT_EQ(link_probe_bytes(llc, 1ULL << 40), 4 * llc);
  EXPECT_EQ(link_probe_bytes(0, 0), 64 * MiB) << "an unknown cache: at least 64 MiB";
  EXPECT_EQ(link_probe_bytes(2 * MiB, 0), 64 * MiB);
  EXPECT_EQ(link_probe_bytes(480 * MiB, 0), 1024 * MiB) << "at most 1 GiB";
  // Two buffers take at most a quarter of what is available.
  EXPECT_EQ(link_probe_bytes(200 * MiB, 8 * 100 * MiB), 100 * MiB);
  EXPECT_EQ(link_probe_bytes(llc, 4 * MiB), MiB);
}

TEST(LinkProbe, MedianOfCopiesIsAPositiveBandwidth) {
  const double gbps = memcpy_bandwidth(4 * MiB, 5);
  EXPECT_GT(gbps, 0.01);
  EXPECT_LT(gbps, 10000.0);
}

}  // namespace
}  // namespace gpuscale
