// harness/benchmarks/collective_plan: the sweep, the transports of a point, the up-front memory
// refusal, and which link a point is set against.
#include <gtest/gtest.h>

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

TEST(CollectivePlan, SizesOverMemoryAreRefusedWithTheNumbers) {
  EXPECT_EQ(collective_memory_refusal(8ULL << 30, 140ULL << 30, 1, "GPU"), std::nullopt);
  const auto why = collective_memory_refusal(64ULL << 30, 100ULL << 30, 1, "the cuda device (NVIDIA H200)");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("64G (68719476736 bytes) does not fit: a send and a receive buffer need 137438953472 bytes "
                      "per rank, but the cuda device (NVIDIA H200) has 107374182400 bytes free"),
            std::string::npos)
      << *why;
  // Ranks sharing one host's memory each get their share.
  EXPECT_EQ(collective_memory_refusal(1ULL << 30, 8ULL << 30, 4, "cpu"), std::nullopt);
  const auto shared = collective_memory_refusal(1ULL << 30, 8ULL << 30, 8, "cpu");
  ASSERT_TRUE(shared);
  EXPECT_NE(shared->find("1073741824 bytes for each of its 8 ranks"), std::string::npos) << *shared;
  EXPECT_TRUE(collective_memory_refusal(UINT64_MAX, UINT64_MAX, 1, "x")) << "no overflow";
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
