// The NIC a GPU sends through (kernels/cuda/nic_plan.h): PCI distances, NCCL_IB_HCA's filter, and the
// nearest port on the layouts GPU nodes have (a NIC per GPU under one switch, a NIC shared by two GPUs,
// two NICs equally near two GPUs), with the reasons when there is none.
#include "kernels/cuda/nic_plan.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_seed.h"

namespace gpuscale::cuda {
namespace {

// Root complex of switch s (two sockets, four switches each), its upstream bridge, a downstream port.
std::string under_switch(int s, int port, int function_bus) {
  return fmt::format("/sys/devices/pci0000:{:02x}/0000:{:02x}:01.0/0000:{:02x}:00.0/0000:{:02x}:{:02x}.0/0000:{:02x}:00.0",
                     s < 4 ? 0 : 0x80, s < 4 ? 0 : 0x80, 0x10 + s, 0x20 + s, port, function_bus);
}

TEST(NicPlan, PciDistanceCountsTheHopsToTheSharedBridge) {
  const std::string a = "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0";
  EXPECT_EQ(pci_distance(a, a), 0);
  EXPECT_EQ(pci_distance(a, "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0"), 4);
  EXPECT_EQ(pci_distance(a, "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.1"), 2);
  EXPECT_EQ(pci_distance(a, "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0"), 8);
  EXPECT_EQ(pci_distance(a, a + "/"), 0);  // a trailing slash is no component
  EXPECT_EQ(pci_distance("", ""), 0);
}

TEST(NicPlan, TheHcaFilterSelectsByPrefixExactNameAndPortOrExcludes) {
  const NicPort p0{"mlx5_0", 1, "", true}, p1{"mlx5_1", 1, "", true}, p10{"mlx5_10", 2, "", true};
  EXPECT_TRUE(hca_selected("", p0));
  EXPECT_TRUE(hca_selected("mlx5_1", p1));
  EXPECT_TRUE(hca_selected("mlx5_1", p10));  // a prefix, as NCCL reads it
  EXPECT_FALSE(hca_selected("=mlx5_1", p10));
  EXPECT_TRUE(hca_selected("=mlx5_1", p1));
  EXPECT_FALSE(hca_selected("^mlx5_0", p0));
  EXPECT_TRUE(hca_selected("^mlx5_0", p1));
  EXPECT_TRUE(hca_selected("mlx5_0,mlx5_10:2", p10));
  EXPECT_FALSE(hca_selected("mlx5_10:1", p10));
  EXPECT_FALSE(hca_selected("^=mlx5_10:2", p10));
  EXPECT_FALSE(hca_selected(",", p0));
}

TEST(NicPlan, RailOptimisedNodesGiveEachGpuTheNicUnderItsSwitch) {
  std::vector<NicPort> ports;
  for (int s = 0; s < 8; ++s) ports.push_back({fmt::format("mlx5_{}", s), 1, under_switch(s, 2, 0x40 + s), true});
  std::mt19937 rng(static_cast<std::uint32_t>(test_seed()));
  std::shuffle(ports.begin(), ports.end(), rng);  // sysfs order is not the answer
  for (int g = 0; g < 8; ++g) {
    const auto c = nearest_nic(under_switch(g, 1, 0x30 + g), g, ports, "");
    ASSERT_TRUE(c.nic) << c.rule;
    EXPECT_EQ(c.nic->device, fmt::format("mlx5_{}", g));
    EXPECT_EQ(c.nic->port, 1);
    EXPECT_NE(c.rule.find("(4 hops)"), std::string::npos) << c.rule;
  }
}

TEST(NicPlan, TwoGpusShareTheirSwitchsNicAndEquallyNearNicsAreSpreadByGpuIndex) {
  std::vector<NicPort> shared, two;
  for (int s = 0; s < 4; ++s) {
    shared.push_back({fmt::format("mlx5_{}", s), 1, under_switch(s, 3, 0x50 + s), true});
    for (int k = 0; k < 2; ++k) two.push_back({fmt::format("mlx5_{}", 2 * s + k), 1, under_switch(s, 3, 0x60 + 2 * s + k), true});
  }
  for (int g = 0; g < 8; ++g) {
    const auto gpu = under_switch(g / 2, 1 + g % 2, 0x30 + g);
    const auto a = nearest_nic(gpu, g, shared, "");
    ASSERT_TRUE(a.nic);
    EXPECT_EQ(a.nic->device, fmt::format("mlx5_{}", g / 2));
    const auto b = nearest_nic(gpu, g, two, "");
    ASSERT_TRUE(b.nic);
    EXPECT_EQ(b.nic->device, fmt::format("mlx5_{}", g));  // GPU index mod the 2 equally near
    EXPECT_NE(b.rule.find("of 2 equally near"), std::string::npos) << b.rule;
  }
}

TEST(NicPlan, ATieWithoutTheGpusNodeIndexOrUnderATopologyFileIsUnknown) {
  const auto gpu = under_switch(0, 1, 0x30);
  const std::vector<NicPort> two = {{"mlx5_0", 1, under_switch(0, 3, 0x40), true}, {"mlx5_1", 1, under_switch(0, 3, 0x41), true}};
  const auto tied = nearest_nic(gpu, std::nullopt, two, "");
  EXPECT_FALSE(tied.nic);
  EXPECT_NE(tied.rule.find("unknown: 2 ports equally near (mlx5_0:1, mlx5_1:1)"), std::string::npos) << tied.rule;
  const std::vector<NicPort> one = {two[0], {"mlx5_9", 1, under_switch(7, 3, 0x49), true}};
  EXPECT_EQ(nearest_nic(gpu, std::nullopt, one, "").nic->device, "mlx5_0") << "no tie: the index is not needed";
  const auto topo = nearest_nic(gpu, 0, one, "", "/opt/topo.xml");
  EXPECT_FALSE(topo.nic);
  EXPECT_NE(topo.rule.find("unknown: NCCL_TOPO_FILE=/opt/topo.xml"), std::string::npos) << topo.rule;
}

TEST(NicPlan, InactiveAndFilteredPortsAreNotChosenAndNoneSaysWhy) {
  const auto gpu = under_switch(0, 1, 0x30);
  std::vector<NicPort> ports = {{"mlx5_0", 1, under_switch(0, 2, 0x40), false}, {"mlx5_1", 1, under_switch(5, 2, 0x41), true}};
  auto c = nearest_nic(gpu, 0, ports, "");
  ASSERT_TRUE(c.nic);
  EXPECT_EQ(c.nic->device, "mlx5_1");  // the near one is down: the far active one
  c = nearest_nic(gpu, 0, ports, "^mlx5_1");
  EXPECT_FALSE(c.nic);
  EXPECT_NE(c.rule.find("none of the 2 ports"), std::string::npos) << c.rule;
  EXPECT_NE(c.rule.find("NCCL_IB_HCA=^mlx5_1"), std::string::npos) << c.rule;
  c = nearest_nic(gpu, 0, {}, "");
  EXPECT_FALSE(c.nic);
  EXPECT_NE(c.rule.find("no network port"), std::string::npos) << c.rule;
  c = nearest_nic("", 0, ports, "");
  EXPECT_FALSE(c.nic);
  EXPECT_NE(c.rule.find("PCI path is unknown"), std::string::npos) << c.rule;
  // A multi-port device: each port is a choice of its own, spread as equally near.
  const std::vector<NicPort> dual = {{"mlx5_0", 2, under_switch(0, 2, 0x40), true}, {"mlx5_0", 1, under_switch(0, 2, 0x40), true}};
  EXPECT_EQ(nearest_nic(gpu, 0, dual, "").nic->port, 1);
  EXPECT_EQ(nearest_nic(gpu, 1, dual, "").nic->port, 2);
}

}  // namespace
}  // namespace gpuscale::cuda
