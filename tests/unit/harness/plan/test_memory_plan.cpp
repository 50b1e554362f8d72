// harness/memory_plan and the benchmarks' demands: every point's memory is planned in 64 bits and a
// point that does not fit is refused before anything runs, with the numbers. Sizes past 2^31 elements
// and GEMMs of 96 GiB are planned exactly; products that overflow 64 bits never fit.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <sstream>

#include "core/error.h"
#include "core/units.h"
#include "harness/plan/memory_plan.h"
#include "harness/registry.h"
#include "kernels/cpu/cpu_topology.h"
#include "kernels/cuda/cuda_plan.h"

namespace gpuscale {
namespace {

using nlohmann::json;
constexpr std::uint64_t GiB = 1ULL << 30;

PointDemand demand_of(const std::string& key, const json& params, const std::string& backend = "cpu", int ranks = 1,
                      RunOptions opts = {}) {
  const Benchmark* b = registry().find(key);
  EXPECT_NE(b, nullptr) << key;
  return b->demand(params, DemandContext{opts, backend, ranks});
}

DeviceInfo cpu_device(std::uint64_t available, int ranks_on_node) {
  DeviceInfo d;
  d.backend = "cpu";
  d.name = "Test CPU";
  d.memory_bytes = available * 2;
  d.free_memory_bytes = available;
  d.details = {{"ranks_on_node", ranks_on_node}};
  d.ranks_sharing_memory = ranks_on_node;  // as the CPU device sets them
  d.memory_owner = "the host";
  return d;
}

DeviceInfo gpu_device(std::uint64_t free) {
  DeviceInfo d;
  d.backend = "cuda";
  d.name = "NVIDIA H200";
  d.index = 3;
  d.memory_bytes = 141 * GiB;
  d.free_memory_bytes = free;
  d.reserved_memory_bytes = cuda::kMemoryHeadroom;  // as the CUDA device sets them
  d.reserved_for = "the CUDA context and libraries";
  d.memory_owner = "GPU 3 (NVIDIA H200)";
  return d;
}

TEST(MemoryPlan, StreamPastTwoToThe31Elements) {
  // 2^31 + 1 fp64 elements per array: 3 arrays of 16 GiB + 8 bytes, no 32-bit wrap anywhere.
  const std::uint64_t n = (1ULL << 31) + 1;
  const auto d = demand_of("stream.triad", {{"dtype", "fp64"}, {"elements", n}, {"array_bytes", n * 8}});
  EXPECT_EQ(d.memory_bytes, 3 * n * 8);
  EXPECT_GT(d.memory_bytes, 48 * GiB);
  EXPECT_NE(d.memory_what.find("3 arrays"), std::string::npos);
  // 16 GiB per rank fits a host with 100 GiB for two ranks? 50 GiB each: yes; with four ranks: no.
  const std::vector<PlannedDemand> plan = {{"stream.triad fp64", d}};
  EXPECT_FALSE(memory_refusal(plan, memory_budget(cpu_device(100 * GiB, 2))));
  const auto why = memory_refusal(plan, memory_budget(cpu_device(100 * GiB, 4)));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("stream.triad fp64 needs 48.00 GiB (51539607576 bytes) per rank"), std::string::npos) << *why;
  EXPECT_NE(why->find("each of the 4 ranks on this node may use 25.00 GiB"), std::string::npos) << *why;
}

TEST(MemoryPlan, GemmOf96GiB) {
  // 65536^3 fp64: A, B and C of 32 GiB each.
  const json p = {{"dtype", "fp64"}, {"m", 65536}, {"n", 65536}, {"k", 65536}, {"layout", "NN"}};
  const auto cpu = demand_of("gemm", p, "cpu");
  EXPECT_EQ(cpu.memory_bytes, 96 * GiB);
  const auto gpu = demand_of("gemm", p, "cuda");
  EXPECT_EQ(gpu.memory_bytes, 96 * GiB + cuda::kGemmWorkspaceBytes);
  EXPECT_DOUBLE_EQ(cpu.flops, 2.0 * 65536.0 * 65536.0 * 65536.0 * (1 + 5));  // warm-up + 5 reps
  // An H200 with 139 GiB free takes it; one with 90 GiB free refuses it, naming the GPU and the numbers.
  EXPECT_FALSE(memory_refusal({{"gemm", gpu}}, memory_budget(gpu_device(139 * GiB))));
  const auto why = memory_refusal({{"gemm fp64 65536x65536x65536 NN", gpu}}, memory_budget(gpu_device(90 * GiB)));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("needs 96.03 GiB"), std::string::npos) << *why;
  EXPECT_NE(why->find("GPU 3 (NVIDIA H200) has 90.00 GiB"), std::string::npos) << *why;
  EXPECT_NE(why->find("kept for the CUDA context"), std::string::npos) << *why;
  // fp8 (1-byte inputs, bf16 output) of the same shape: 4 + 4 + 8 GiB.
  const auto fp8 = demand_of("gemm", {{"dtype", "fp8_e4m3"}, {"m", 65536}, {"n", 65536}, {"k", 65536}, {"layout", "TN"}}, "cuda");
  EXPECT_EQ(fp8.memory_bytes, 16 * GiB + cuda::kGemmWorkspaceBytes);
}

TEST(MemoryPlan, OverflowNeverFits) {
  // 2^40 x 2^40 elements wraps a 64-bit product: planned as "more than 2^64 bytes", refused.
  const json p = {{"dtype", "fp64"}, {"m", 1ULL << 40}, {"n", 1ULL << 40}, {"k", 2}, {"layout", "NN"}};
  const auto d = demand_of("gemm", p, "cpu");
  EXPECT_EQ(d.memory_bytes, UINT64_MAX);
  const auto why = memory_refusal({{"gemm", d}}, memory_budget(cpu_device(UINT64_MAX - 1, 1)));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("more than 2^64 bytes"), std::string::npos) << *why;
  EXPECT_EQ(saturating_mul(1ULL << 32, 1ULL << 32), UINT64_MAX);
  EXPECT_EQ(saturating_mul(1ULL << 31, 1ULL << 32), 1ULL << 63);
  EXPECT_EQ(saturating_add(UINT64_MAX - 1, 2), UINT64_MAX);
  EXPECT_EQ(saturating_add(1, 2), 3u);
}

TEST(MemoryPlan, CollectivesAtTheLargestGroup) {
  // all_gather of 8 GiB (2^31 fp32 elements received) at 8 ranks: each sends 1 GiB, receives 8 GiB.
  const json p = {{"dtype", "fp32"}, {"size_bytes", 8 * GiB}, {"placement", "out-of-place"}};
  const auto d = demand_of("all_gather", p, "cpu", 8);
  EXPECT_EQ(d.memory_bytes, 9 * GiB);
  // In place: the receive buffer only.
  const auto in = demand_of("all_gather", {{"dtype", "fp32"}, {"size_bytes", 8 * GiB}, {"placement", "in-place"}}, "cpu", 8);
  EXPECT_EQ(in.memory_bytes, 8 * GiB);
  // all_reduce of 16 GiB fp16 (2^33 elements): 32 GiB out of place.
  const auto ar = demand_of("all_reduce", {{"dtype", "fp16"}, {"size_bytes", 16 * GiB}, {"placement", "out-of-place"}, {"op", "sum"}},
                            "cuda", 4);
  EXPECT_EQ(ar.memory_bytes, 32 * GiB);
  EXPECT_GT(ar.bytes, 32.0 * GiB);  // every operation touches them
}

TEST(MemoryPlan, BudgetsPerBackend) {
  const auto g = memory_budget(gpu_device(10 * GiB));
  EXPECT_EQ(g.usable, 10 * GiB - cuda::kMemoryHeadroom);
  EXPECT_EQ(memory_budget(gpu_device(1)).usable, 0u);  // less than the headroom: nothing
  EXPECT_EQ(memory_budget(cpu_device(12 * GiB, 3)).usable, 4 * GiB);
  EXPECT_EQ(memory_budget(cpu_device(12 * GiB, 0)).usable, 12 * GiB);  // no count: the whole host
  EXPECT_EQ(memory_budget(cpu_device(12 * GiB, 1)).described, "the host has 12.00 GiB (12884901888 bytes) available");
}

TEST(MemoryPlan, AnUnreadMemoryRefusesNothingAndSaysWhy) {
  // A host whose /proc/meminfo could not be read: before, "the host has 0.00 GiB" refused every point.
  auto d = cpu_device(0, 2);
  d.memory_unread = "/proc/meminfo has no MemAvailable line";
  const auto budget = memory_budget(d);
  EXPECT_EQ(budget.usable, UINT64_MAX);
  EXPECT_EQ(budget.described, "the host's memory could not be read (/proc/meminfo has no MemAvailable line)");
  const json p = {{"dtype", "fp32"}, {"size_bytes", 64 * GiB}, {"placement", "out-of-place"}, {"op", "sum"}};
  EXPECT_FALSE(memory_refusal({{"all_reduce 64G", demand_of("all_reduce", p, "cpu", 2)}}, budget));
  // The same host read as 0 bytes available still refuses, with the figure.
  const auto refused = memory_refusal({{"all_reduce 64G", demand_of("all_reduce", p, "cpu", 2)}}, memory_budget(cpu_device(0, 2)));
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("0.00 GiB"), std::string::npos) << *refused;
}

TEST(MemoryPlan, MeminfoFieldsAreReadByName) {
  std::istringstream text("MemTotal:       24588644 kB\nMemFree:  100 kB\nMemAvailable:   20132000 kB\n");
  EXPECT_EQ(meminfo_field(text, "MemAvailable"), 20132000ULL * 1024);
  std::istringstream again(text.str());
  EXPECT_EQ(meminfo_field(again, "MemTotal"), 24588644ULL * 1024);
  std::istringstream old_kernel("MemTotal: 1000 kB\nMemFree: 10 kB\n");  // before Linux 3.14: no MemAvailable
  EXPECT_EQ(meminfo_field(old_kernel, "MemAvailable"), std::nullopt);
  std::istringstream empty("");
  EXPECT_EQ(meminfo_field(empty, "MemTotal"), std::nullopt);
  std::istringstream garbled("MemAvailable: lots kB\nMemAvailable: 7 kB\n");  // a line that does not parse is skipped
  EXPECT_EQ(meminfo_field(garbled, "MemAvailable"), 7ULL * 1024);
}

TEST(MemoryPlan, PlanDemandsNameUnknownBenchmarks) {
  RunOptions o;
  const json plan = {{"points", {{{"benchmark", "no.such\x1b[2J"}, {"params", json::object()}}}}};
  try {
    plan_demands(plan, DemandContext{o, "cpu", 1});
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'no.such?[2J'"), std::string::npos) << e.what();
  }
  // A whole plan that fits passes; one point too large fails with its label.
  const json ok = {{"points", {{{"benchmark", "stream.copy"}, {"params", {{"dtype", "fp64"}, {"elements", 1024}, {"array_bytes", 8192}}}}}}};
  EXPECT_NO_THROW(check_plan_memory(ok, DemandContext{o, "cpu", 2}, cpu_device(GiB, 2)));
  EXPECT_THROW(check_plan_memory(ok, DemandContext{o, "cpu", 2}, cpu_device(1000, 2)), Error);
}

// Issue 46, finding 5: usable memory is measured before any communicator exists, so a point must leave
// room for the communicators alive during it: the job's (which holds the buffers) and each split one.
TEST(MemoryPlan, CommunicatorsAliveDuringAPointCount) {
  const CommunicatorMemory nccl{1600ULL * 1000 * 1000, 64ULL << 20, "NCCL"};
  PointDemand small;
  small.memory_bytes = 100ULL << 20;
  small.memory_what = "buffers";
  // A 4 GB GPU: the point and three split communicators fit beside the job's; with two more of the
  // point's own (train-step's dimensions) too; a point with no communicator counts none.
  const auto budget = memory_budget(gpu_device(4ULL * 1000 * 1000 * 1000));
  EXPECT_EQ(communicator_bytes({"stream", small, 0}, nccl), 0u);
  EXPECT_EQ(communicator_bytes({"all_reduce", small, 3}, nccl), nccl.first_bytes + 3 * nccl.split_bytes);
  EXPECT_FALSE(memory_refusal({{"all_reduce", small, 3}}, budget, nccl));
  // Had every communicator its own buffers (before the fix), two would not leave room for the point.
  const CommunicatorMemory own{1600ULL * 1000 * 1000, 1600ULL * 1000 * 1000, "NCCL without splitShare"};
  const auto refused = memory_refusal({{"all_reduce 1K", small, 2}}, budget, own);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("all_reduce 1K needs"), std::string::npos) << *refused;
  EXPECT_NE(refused->find("and 2 split from it (NCCL without splitShare)"), std::string::npos) << *refused;
  // The CPU backend's communicators hold no device memory: nothing is added.
  EXPECT_FALSE(memory_refusal({{"all_reduce", small, 4}}, memory_budget(cpu_device(GiB, 1)), {}));
  // Saturating: a count past 2^64 bytes never fits.
  PointDemand huge = small;
  huge.communicators = INT32_MAX;
  EXPECT_TRUE(memory_refusal({{"x", huge, INT32_MAX}}, memory_budget(gpu_device(UINT64_MAX)),
                             CommunicatorMemory{UINT64_MAX / 2, UINT64_MAX / 4, ""}));
  // Random points: refused exactly when memory + the job's + splits x each exceeds the usable share.
  std::mt19937_64 rng(46);
  for (int trial = 0; trial < 500; ++trial) {
    PointDemand d;
    d.memory_bytes = rng() % (8 * GiB);
    d.communicators = static_cast<int>(rng() % 7);
    const int alive = static_cast<int>(rng() % 5);
    const CommunicatorMemory m{rng() % (2 * GiB), rng() % (256ULL << 20), "m"};
    const auto b = memory_budget(gpu_device(rng() % (16 * GiB)));
    const int splits = alive + d.communicators;
    const std::uint64_t need = d.memory_bytes + (splits > 0 ? m.first_bytes + m.split_bytes * static_cast<std::uint64_t>(splits) : 0);
    EXPECT_EQ(memory_refusal({{"p", d, alive}}, b, m).has_value(), need > b.usable)
        << d.memory_bytes << " + " << splits << " communicators against " << b.usable;
  }
}

}  // namespace
}  // namespace gpuscale
