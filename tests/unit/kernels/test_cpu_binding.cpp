// Binding a rank to its GPU's NUMA cores (kernels/cuda/cpu_binding.h): the pure decision.
#include <random>

#include <gtest/gtest.h>

#include "test_seed.h"
#include "kernels/cuda/cpu_binding.h"

namespace gpuscale {
namespace {

std::set<int> range(int lo, int hi) {
  std::set<int> s;
  for (int c = lo; c <= hi; ++c) s.insert(c);
  return s;
}

TEST(CpuList, ParsesAndFormatsRandomSetsBothWays) {
  std::mt19937 rng(test_seed());
  for (int trial = 0; trial < 200; ++trial) {
    std::set<int> s;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) s.insert(static_cast<int>(rng() % 256));
    const auto text = format_cpulist(s);
    const auto back = parse_cpulist(text);
    ASSERT_TRUE(back) << text;
    EXPECT_EQ(*back, s) << text;
  }
  EXPECT_EQ(format_cpulist({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(*parse_cpulist("0-3,8,10-11\n"), (std::set<int>{0, 1, 2, 3, 8, 10, 11}));
}

TEST(CpuList, RefusesWhatIsNotACpuList) {
  for (const char* bad : {"a", "3-1", "1,,2", "-1", "0-", "1-2-3", "99999"}) EXPECT_FALSE(parse_cpulist(bad)) << bad;
}

TEST(CpuBinding, BindsToTheGpuNodeCoresTheRankMayUse) {
  // 2 sockets x 32 cores; the GPU sits on node 1 (cores 32-63); the launcher allowed everything.
  const auto b = choose_cpu_binding(range(0, 63), range(32, 63), 1, "0000:9b:00.0", false);
  EXPECT_TRUE(b.bound);
  EXPECT_EQ(b.cpus, range(32, 63));
  EXPECT_NE(b.rule.find("NUMA node 1"), std::string::npos) << b.rule;
  EXPECT_NE(b.rule.find("32-63"), std::string::npos) << b.rule;
}

TEST(CpuBinding, KeepsTheLaunchersNarrowerBindingInsideTheNode) {
  // Slurm bound the task to cores 40-47, all on the GPU's node: nothing to change.
  const auto b = choose_cpu_binding(range(40, 47), range(32, 63), 1, "0000:9b:00.0", false);
  EXPECT_FALSE(b.bound);
  EXPECT_EQ(b.cpus, range(40, 47));
  EXPECT_NE(b.rule.find("already on"), std::string::npos) << b.rule;
}

TEST(CpuBinding, NarrowsAMaskThatSpansNodesToTheGpuNode) {
  const auto b = choose_cpu_binding(range(24, 39), range(32, 63), 1, "x", false);
  EXPECT_TRUE(b.bound);
  EXPECT_EQ(b.cpus, range(32, 39));
}

TEST(CpuBinding, LeavesARankTheLauncherPlacedOnAnotherNode) {
  const auto b = choose_cpu_binding(range(0, 7), range(32, 63), 1, "0000:9b:00.0", false);
  EXPECT_FALSE(b.bound);
  EXPECT_EQ(b.cpus, range(0, 7));
  EXPECT_NE(b.rule.find("not bound"), std::string::npos) << b.rule;
}

TEST(CpuBinding, UnknownNodeOrOptOutLeavesTheRankAlone) {
  EXPECT_FALSE(choose_cpu_binding(range(0, 7), std::nullopt, -1, "x", false).bound);
  EXPECT_FALSE(choose_cpu_binding(range(0, 7), range(0, 3), -1, "x", false).bound);
  const auto off = choose_cpu_binding(range(0, 63), range(32, 63), 1, "x", true);
  EXPECT_FALSE(off.bound);
  EXPECT_NE(off.rule.find("GPUSCALE_CPU_BIND=none"), std::string::npos) << off.rule;
}

}  // namespace
}  // namespace gpuscale
