// harness/benchmarks/collective_plan: the sweep, the transports of a point, the up-front memory
// refusal, and which link a point is set against.
#include <gtest/gtest.h>

#include <random>

#include "test_seed.h"

#include "core/error.h"
#include "harness/benchmarks/collective_plan.h"

namespace gpuscale {
namespace {

TEST(CollectivePlan, SweepDefaultsAndFlags) {
  RunOptions o;
  EXPECT_EQ(collective_sizes(o, "cuda").front(), 8u);
  EXPECT_EQ(collective_sizes(o, "cuda").back(), 8ULL << 30);
  o.quick = true;
  EXPECT_EQ(collective_sizes(o, "cpu"), std::vector<std::uint64_t>({1024, 32768, 1048576}));
  o.min_bytes = 1000;
  o.max_bytes = 3000;
  o.step_bytes = 1000;
  EXPECT_EQ(collective_sizes(o, "cpu"), std::vector<std::uint64_t>({1000, 2000, 3000}));
}

TEST(CollectivePlan, AnInnerRunSweepsItsOwnMessageOnly) {
  // A fleet pair's 256M inside a default GPU sweep (8 B .. 8 GiB, which also holds 256M): its buffers
  // must span 256M, not 8 GiB; whatever -b/-e/-f/-i the run was given.
  std::mt19937_64 rng(test_seed());
  const std::uint64_t size = (1ULL << 20) + rng() % (1ULL << 30);
  RunOptions o;
  for (int flags = 0; flags < 4; ++flags) {
    if (flags == 1) o.step_bytes = 4096;
    if (flags == 2) o.min_bytes = 2 * size;  // even a -b above the message
    if (flags == 3) o.quick = true;
    const auto one = with_one_size(o, size);
    EXPECT_EQ(collective_sizes(one, "cuda"), std::vector<std::uint64_t>{size}) << flags;
    EXPECT_EQ(collective_sizes(one, "cpu"), std::vector<std::uint64_t>{size}) << flags;
  }
  EXPECT_EQ(collective_sizes(with_one_size(RunOptions{}, 256ULL << 20), "cuda").back(), 256ULL << 20);
}

TEST(CollectivePlan, TransportsPerBackend) {
  RunOptions o;
  EXPECT_TRUE(collective_transports(o, "cpu", {}).empty()) << "the CPU backend's rows carry no transport";
  EXPECT_EQ(collective_transports(o, "cuda", {"nccl"}), std::vector<std::string>({"nccl"}));
  EXPECT_EQ(collective_transports(o, "cuda", {"nccl", "mpi"}), std::vector<std::string>({"nccl", "mpi"}));
  o.transports = {"mpi"};  // asked for: MPI on GPU buffers even when it is not CUDA-aware (host-staged)
  EXPECT_EQ(collective_transports(o, "cuda", {"nccl"}), std::vector<std::string>({"mpi"}));
  EXPECT_TRUE(collective_transports(o, "cpu", {}).empty());
  o.transports = {"nccl"};
  try {
    collective_transports(o, "cpu", {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--transports nccl: the cpu backend's collectives run over MPI only");
  }
}

DeviceInfo memory_device(std::uint64_t free, std::uint64_t reserved, int sharers) {
  DeviceInfo d;
  d.backend = sharers > 1 ? "cpu" : "cuda";
  d.name = "NVIDIA H200";
  d.free_memory_bytes = free;
  d.reserved_memory_bytes = reserved;
  d.reserved_for = "the CUDA context and libraries";
  d.ranks_sharing_memory = sharers;
  d.memory_owner = sharers > 1 ? "the host" : "GPU 0 (NVIDIA H200)";
  return d;
}

TEST(CollectivePlan, SizesOverMemoryAreRefusedWithTheNumbers) {
  EXPECT_EQ(collective_memory_refusal(8ULL << 30, memory_device(140ULL << 30, 256ULL << 20, 1)), std::nullopt);
  const auto why = collective_memory_refusal(64ULL << 30, memory_device(100ULL << 30, 256ULL << 20, 1));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("64G (68719476736 bytes) does not fit: a send and a receive buffer need 137438953472 bytes "
                      "per rank, but GPU 0 (NVIDIA H200) has 100.00 GiB (107374182400 bytes) available"),
            std::string::npos)
      << *why;
  // The headroom kept for the CUDA context counts: exactly half the free memory does not fit.
  EXPECT_TRUE(collective_memory_refusal(50ULL << 30, memory_device(100ULL << 30, 256ULL << 20, 1)));
  EXPECT_FALSE(collective_memory_refusal(50ULL << 30, memory_device(100ULL << 30, 0, 1)));
  // Ranks sharing one host's memory each get their share.
  EXPECT_EQ(collective_memory_refusal(1ULL << 30, memory_device(8ULL << 30, 0, 4)), std::nullopt);
  const auto shared = collective_memory_refusal(1ULL << 30, memory_device(8ULL << 30, 0, 8));
  ASSERT_TRUE(shared);
  EXPECT_NE(shared->find("each of the 8 ranks on this node may use 1.00 GiB"), std::string::npos) << *shared;
  EXPECT_TRUE(collective_memory_refusal(UINT64_MAX, memory_device(UINT64_MAX, 0, 1))) << "no overflow";
}

TEST(CollectivePlan, LinkPeakByTopology) {
  LinkPeaks links;
  links.intra_node = {450.0, "NVLink"};
  links.inter_node = {50.0, "mlx5_0/1"};
  EXPECT_FALSE(collective_link_peak("single", links, 1024).value);
  EXPECT_EQ(collective_link_peak("intra-node", links, 1024).value, 450.0);
  EXPECT_EQ(collective_link_peak("inter-node", links, 1024).value, 50.0) << "the slowest link crossed: the network";
  links.intra_node_at = [](std::uint64_t bytes) { return ExpectedPeak{static_cast<double>(bytes), "measured"}; };
  EXPECT_EQ(collective_link_peak("intra-node", links, 4096).value, 4096.0);
  EXPECT_EQ(collective_link_peak("inter-node", links, 4096).value, 50.0);
}

}  // namespace
}  // namespace gpuscale
