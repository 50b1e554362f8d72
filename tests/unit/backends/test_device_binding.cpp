// Which GPU each rank uses (backends/cuda/device_binding.h), for every launch shape, without a GPU.
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backends/cuda/device_binding.h"
#include "core/error.h"

namespace gpuscale {
namespace {

std::vector<std::string> gpus(int n, int first = 0) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("GPU-" + std::to_string(first + i));
  return out;
}

std::string assign_error(const std::vector<RankGpus>& ranks) {
  try {
    assign_gpus(ranks);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitNoDevice);
    return e.what();
  }
  return "";
}

TEST(DeviceBinding, UnboundRanksTakeGpuLocalRank) {
  // 2 nodes x 4 ranks, every rank sees its node's 4 GPUs.
  std::vector<RankGpus> r;
  for (int i = 0; i < 8; ++i) r.push_back({i, i < 4 ? "n1" : "n2", i % 4, gpus(4), std::nullopt});
  const auto a = assign_gpus(r);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(a[i].ordinal, i % 4);
  EXPECT_NE(a[5].rule.find("GPU 1 of the 4"), std::string::npos) << a[5].rule;
}

TEST(DeviceBinding, FewerRanksThanGpusIsFine) {
  const auto a = assign_gpus({{0, "n1", 0, gpus(8), std::nullopt}, {1, "n1", 1, gpus(8), std::nullopt}});
  EXPECT_EQ(a[0].ordinal, 0);
  EXPECT_EQ(a[1].ordinal, 1);
}

TEST(DeviceBinding, RanksOrderedByLocalRankNotWorldRank) {
  // Round-robin placement: world ranks 0, 2 on n1 and 1, 3 on n2.
  const auto a = assign_gpus({{0, "n1", 0, gpus(2), std::nullopt}, {1, "n2", 0, gpus(2), std::nullopt},
                              {2, "n1", 1, gpus(2), std::nullopt}, {3, "n2", 1, gpus(2), std::nullopt}});
  EXPECT_EQ(a[0].ordinal, 0);
  EXPECT_EQ(a[1].ordinal, 0);
  EXPECT_EQ(a[2].ordinal, 1);
  EXPECT_EQ(a[3].ordinal, 1);
}

TEST(DeviceBinding, GpusPerTaskGivesEveryRankItsOwnDevice0) {
  // srun --gpus-per-task=1: each task sees one different GPU, as ordinal 0.
  std::vector<RankGpus> r;
  for (int i = 0; i < 4; ++i) r.push_back({i, "n1", i, gpus(1, i), std::to_string(i)});
  const auto a = assign_gpus(r);
  for (const auto& x : a) {
    EXPECT_EQ(x.ordinal, 0);
    EXPECT_NE(x.rule.find("its only visible GPU"), std::string::npos) << x.rule;
  }
  EXPECT_NE(a[2].rule.find("CUDA_VISIBLE_DEVICES=2"), std::string::npos) << a[2].rule;
}

TEST(DeviceBinding, TwoGpusPerTaskUsesTheFirstOfEach) {
  const auto a = assign_gpus({{0, "n1", 0, gpus(2, 0), "0,1"}, {1, "n1", 1, gpus(2, 2), "2,3"}});
  EXPECT_EQ(a[0].ordinal, 0);
  EXPECT_EQ(a[1].ordinal, 0);
}

TEST(DeviceBinding, MoreRanksThanVisibleGpusNamesTheHostAndBothCounts) {
  std::vector<RankGpus> r;
  for (int i = 0; i < 8; ++i) r.push_back({i, i < 4 ? "n1" : "gpu-node-7", i % 4, i < 4 ? gpus(4) : gpus(2), std::nullopt});
  const auto msg = assign_error(r);
  EXPECT_NE(msg.find("host gpu-node-7: 4 ranks share the 2 GPU(s) they can see"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CUDA_VISIBLE_DEVICES unset"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos);
}

TEST(DeviceBinding, SharingOneGpuIsAnError) {
  // mpirun -np 2 on a one-GPU machine: both ranks see the same single GPU.
  const auto msg = assign_error({{0, "ws", 0, gpus(1), std::nullopt}, {1, "ws", 1, gpus(1), std::nullopt}});
  EXPECT_NE(msg.find("host ws: 2 ranks share the 1 GPU(s)"), std::string::npos) << msg;
}

TEST(DeviceBinding, OverlappingVisibleSetsThatCollideAreAnError) {
  const auto msg = assign_error({{0, "n1", 0, {"GPU-a", "GPU-b"}, "0,1"}, {1, "n1", 1, {"GPU-a", "GPU-c"}, "0,2"}});
  EXPECT_NE(msg.find("ranks 0 and 1 would both use GPU GPU-a"), std::string::npos) << msg;
}

TEST(DeviceBinding, SameUuidOnDifferentHostsIsNotACollision) {
  const auto a = assign_gpus({{0, "n1", 0, gpus(1), std::nullopt}, {1, "n2", 0, gpus(1), std::nullopt}});
  EXPECT_EQ(a[1].ordinal, 0);
}

TEST(DeviceBinding, ARankThatSeesNoGpu) {
  const auto msg = assign_error({{0, "n1", 0, gpus(1), "0"}, {1, "n1", 1, {}, ""}});
  EXPECT_NE(msg.find("no CUDA device on rank 1 (n1)"), std::string::npos) << msg;
}

TEST(VisibleDevices, ParsedAsTheDriverReadsThem) {
  EXPECT_EQ(parse_visible_devices("0,1,2"), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(parse_visible_devices(" 3 , 1"), (std::vector<std::string>{"3", "1"}));
  EXPECT_EQ(parse_visible_devices("GPU-8a1f-22,MIG-5b"), (std::vector<std::string>{"GPU-8a1f-22", "MIG-5b"}));
  EXPECT_EQ(parse_visible_devices("0,x,1"), (std::vector<std::string>{"0"}));  // stops at the first invalid
  EXPECT_TRUE(parse_visible_devices("").empty());
  EXPECT_TRUE(parse_visible_devices("-1").empty());
  EXPECT_TRUE(parse_visible_devices("NoDevFiles").empty());
}

TEST(VisibleDevices, NoDeviceReasonNamesTheVariableWhenItHidesEveryGpu) {
  EXPECT_EQ(no_device_reason("no CUDA-capable device is detected", std::nullopt), "no CUDA-capable device is detected");
  EXPECT_EQ(no_device_reason("no CUDA-capable device is detected", std::string("0,1")),
            "no CUDA-capable device is detected");
  EXPECT_EQ(no_device_reason("no CUDA-capable device is detected", std::string("-1")),
            "no CUDA-capable device is detected (CUDA_VISIBLE_DEVICES='-1' hides every GPU)");
}

std::string mig_list(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += fmt::format("{}MIG-{:08x}-aaaa-bbbb-cccc-{:012x}", i ? "," : "", 0x1000 + i * 7, i);
  return out;
}

TEST(MigBinding, SevenRanksOfAPodTakeSevenDifferentSlices) {
  // The device plugin's list (NVIDIA_VISIBLE_DEVICES) in a pod with nvidia.com/mig-1g.18gb: 7.
  const auto list = mig_list(7);
  std::set<std::string> taken;
  for (int r = 0; r < 7; ++r) {
    const auto b = mig_slice_binding(std::nullopt, list, r, 7);
    ASSERT_TRUE(b);
    EXPECT_EQ(parse_visible_devices(b->visible_devices).size(), 1u);
    EXPECT_EQ(b->visible_devices.rfind("MIG-", 0), 0u);
    EXPECT_NE(b->rule.find("NVIDIA_VISIBLE_DEVICES"), std::string::npos);
    taken.insert(b->visible_devices);
  }
  EXPECT_EQ(taken.size(), 7u);
}

TEST(MigBinding, CudaVisibleDevicesWinsOverTheDevicePluginList) {
  const auto b = mig_slice_binding(mig_list(3), mig_list(7), 2, 3);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->visible_devices, parse_visible_devices(mig_list(3))[2]);
  EXPECT_NE(b->rule.find("CUDA_VISIBLE_DEVICES"), std::string::npos);
}

TEST(MigBinding, NothingToSplitWithoutSeveralSlices) {
  EXPECT_FALSE(mig_slice_binding(std::nullopt, std::nullopt, 0, 1));
  EXPECT_FALSE(mig_slice_binding(std::nullopt, std::string("all"), 0, 8));
  EXPECT_FALSE(mig_slice_binding(std::string("0,1,2,3"), std::nullopt, 1, 4));
  EXPECT_FALSE(mig_slice_binding(std::nullopt, mig_list(1), 0, 1));  // one slice: CUDA sees it anyway
  EXPECT_FALSE(mig_slice_binding(std::string(""), mig_list(7), 0, 7));  // CUDA_VISIBLE_DEVICES set: it decides
}

TEST(MigBinding, RanksStartedBySshdTakeTheContainersList) {
  // The MPI Operator starts ranks through sshd: neither variable in the rank's environment, the device
  // plugin's list in the container's first process. Seven ranks, seven slices, none shared.
  const std::string list = mig_list(7);
  std::string environ = std::string("PATH=/usr/bin") + '\0' + "NVIDIA_VISIBLE_DEVICES=" + list + '\0' + "HOME=/root";
  environ.push_back('\0');
  const auto container = environ_value(environ, "NVIDIA_VISIBLE_DEVICES");
  ASSERT_EQ(container, list);
  std::set<std::string> taken;
  for (int r = 0; r < 7; ++r) {
    const auto b = mig_slice_binding(std::nullopt, std::nullopt, r, 7, container);
    ASSERT_TRUE(b);
    EXPECT_NE(b->rule.find("/proc/1/environ"), std::string::npos) << b->rule;
    taken.insert(b->visible_devices);
  }
  EXPECT_EQ(taken.size(), 7u);
  // The rank's own variables decide when it has them.
  EXPECT_EQ(mig_slice_binding(std::nullopt, mig_list(3), 1, 3, container)->visible_devices, parse_visible_devices(mig_list(3))[1]);
  EXPECT_FALSE(mig_slice_binding(std::string("0"), std::nullopt, 0, 7, container));
  // environ_value: exact names only, the last entry without its NUL, absent names.
  EXPECT_EQ(environ_value(std::string("XNVIDIA_VISIBLE_DEVICES=a") + '\0' + "NVIDIA_VISIBLE_DEVICES=b", "NVIDIA_VISIBLE_DEVICES"), "b");
  EXPECT_EQ(environ_value("NVIDIA_VISIBLE_DEVICES_X=a", "NVIDIA_VISIBLE_DEVICES"), std::nullopt);
  EXPECT_EQ(environ_value("", "NVIDIA_VISIBLE_DEVICES"), std::nullopt);
  EXPECT_EQ(environ_value("NVIDIA_VISIBLE_DEVICES=", "NVIDIA_VISIBLE_DEVICES"), "");
}

TEST(MigBinding, MoreRanksThanSlicesNamesBothCounts) {
  try {
    mig_slice_binding(std::nullopt, mig_list(3), 0, 4);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitNoDevice);
    EXPECT_NE(std::string(e.what()).find("4 ranks"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("3 MIG slices"), std::string::npos) << e.what();
  }
}

TEST(BackendChoice, EveryRankTakesTheSameBranch) {
  EXPECT_FALSE(ranks_without_gpus({{0, "a", 8, ""}, {1, "b", 1, ""}}));
  // Every rank without a GPU for the same reason: the reason alone.
  EXPECT_EQ(ranks_without_gpus({{0, "a", 0, "no driver"}, {1, "b", 0, "no driver"}}), "no driver");
  // One node without: named, so the CPU fallback (auto) or the error (cuda) says where.
  EXPECT_EQ(ranks_without_gpus({{0, "a", 8, ""}, {1, "b", 0, "no driver"}, {2, "c", 0, "no driver"}}),
            "rank 1 (b): no driver");
  EXPECT_EQ(ranks_without_gpus({{0, "a", 0, "x"}, {1, "b", 0, "y"}}), "rank 0 (a): x");
}

}  // namespace
}  // namespace gpuscale
