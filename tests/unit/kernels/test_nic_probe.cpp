// The sysfs seam of the NIC choice (kernels/cuda/nic_probe.h) on a fake sysfs tree: ports and their
// state, a GPU's PCI path through the bus links (CUDA's 8-digit domain too), the GPU's index among the
// node's GPUs, and details.nic.
#include "kernels/cuda/nic_probe.h"

#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

#include <gtest/gtest.h>

#include "test_seed.h"

namespace gpuscale::cuda {
namespace {

namespace fs = std::filesystem;

// A sysfs tree: GPU 0000:1b:00.0 and NIC mlx5_0 under one switch; mlx5_1 on the other socket, with a
// second port that is down.
struct FakeSysfs {
  fs::path root;
  FakeSysfs() {
    root = fs::temp_directory_path() / ("gpuscale-sysfs-" + std::to_string(test_seed()) + "-" + std::to_string(::getpid()));
    fs::remove_all(root);
    const auto sw = root / "devices/pci0000:16/0000:16:02.0/0000:17:00.0";
    const auto gpu = sw / "0000:18:00.0/0000:1b:00.0";
    const auto nic0 = sw / "0000:18:01.0/0000:1c:00.0";
    const auto nic1 = root / "devices/pci0000:80/0000:80:01.0/0000:81:00.0";
    for (const auto& d : {gpu, nic0, nic1, root / "bus/pci/devices"}) fs::create_directories(d);
    fs::create_directory_symlink(gpu, root / "bus/pci/devices/0000:1b:00.0");
    port("mlx5_0", nic0, 1, "4: ACTIVE");
    port("mlx5_1", nic1, 1, "4: ACTIVE");
    port("mlx5_1", nic1, 2, "1: DOWN");
  }
  ~FakeSysfs() { fs::remove_all(root); }
  void port(const std::string& dev, const fs::path& pci, int n, const std::string& state) const {
    const auto d = root / "class/infiniband" / dev;
    fs::create_directories(d / "ports" / std::to_string(n));
    if (!fs::exists(d / "device")) fs::create_directory_symlink(pci, d / "device");
    std::ofstream(d / "ports" / std::to_string(n) / "state") << state << "\n";
  }
};

TEST(NicProbe, ReadsPortsAndTheGpuPathFromSysfs) {
  FakeSysfs sys;
  const auto ports = read_nic_ports(sys.root.string());
  ASSERT_EQ(ports.size(), 3u);
  EXPECT_EQ(ports[0].device, "mlx5_0");
  EXPECT_TRUE(ports[0].active);
  EXPECT_EQ(ports[2].device, "mlx5_1");
  EXPECT_EQ(ports[2].port, 2);
  EXPECT_FALSE(ports[2].active);
  EXPECT_NE(ports[0].pci_path.find("0000:18:01.0/0000:1c:00.0"), std::string::npos) << ports[0].pci_path;
  const auto gpu = read_pci_path(sys.root.string(), "00000000:1B:00.0");  // CUDA's spelling
  EXPECT_NE(gpu.find("0000:18:00.0/0000:1b:00.0"), std::string::npos) << gpu;
  EXPECT_EQ(read_pci_path(sys.root.string(), "0000:1b:00.0"), gpu);
  EXPECT_EQ(read_pci_path(sys.root.string(), "0000:99:00.0"), "");
  EXPECT_TRUE(read_nic_ports((sys.root / "absent").string()).empty());
}

TEST(NicProbe, DetailsNameTheNearestNicOrSayWhyNone) {
  FakeSysfs sys;
  const auto d = nic_details(sys.root.string(), "0000:1B:00.0", "", "");
  ASSERT_TRUE(d["nic"].is_object()) << d.dump();
  EXPECT_EQ(d["nic"]["device"], "mlx5_0");
  EXPECT_EQ(d["nic"]["port"], 1);
  EXPECT_EQ(d["nic"]["pci_bus_id"], "0000:1c:00.0");
  EXPECT_FALSE(d.contains("nic_note"));
  EXPECT_EQ(nic_details(sys.root.string(), "0000:1B:00.0", "mlx5_1", "")["nic"]["device"], "mlx5_1");
  const auto none = nic_details(sys.root.string(), "0000:99:00.0", "", "");
  EXPECT_TRUE(none["nic"].is_null());
  EXPECT_NE(none["nic_note"].get<std::string>().find("PCI path is unknown"), std::string::npos);
}

// Two GPUs under one switch with two NICs, each as near to both: under --gpus-per-task=1 both are CUDA
// ordinal 0, and NCCL still spreads them. Their index among the node's GPUs by bus id (a third GPU on
// another root, hidden from CUDA, counts; an NVIDIA bridge that is no GPU does not) breaks the tie.
struct TiedSysfs {
  fs::path root;
  TiedSysfs() {
    root = fs::temp_directory_path() / ("gpuscale-sysfs-tied-" + std::to_string(test_seed()) + "-" + std::to_string(::getpid()));
    fs::remove_all(root);
    const auto sw = root / "devices/pci0000:16/0000:16:02.0/0000:17:00.0";
    device(root / "devices/pci0000:00/0000:00:01.0/0000:0a:00.0", "0x10de", "0x030200");  // hidden GPU
    device(sw / "0000:18:00.0/0000:1b:00.0", "0x10de", "0x030200");
    device(sw / "0000:18:02.0/0000:1e:00.0", "0x10de", "0x030000");                   // a VGA-class GPU
    device(root / "devices/pci0000:00/0000:00:02.0/0000:05:00.0", "0x10de", "0x068000");  // NVSwitch bridge
    device(root / "devices/pci0000:00/0000:00:03.0/0000:06:00.0", "0x8086", "0x030000");  // not NVIDIA's
    for (const auto& [name, at] : {std::pair{"mlx5_0", "0000:18:01.0/0000:1c:00.0"}, {"mlx5_1", "0000:18:03.0/0000:1f:00.0"}}) {
      const auto d = root / "class/infiniband" / name;
      fs::create_directories(sw / at);
      fs::create_directories(d / "ports/1");
      fs::create_directory_symlink(sw / at, d / "device");
      std::ofstream(d / "ports/1/state") << "4: ACTIVE\n";
    }
  }
  ~TiedSysfs() { fs::remove_all(root); }
  void device(const fs::path& dir, const char* vendor, const char* klass) const {
    fs::create_directories(dir);
    fs::create_directories(root / "bus/pci/devices");
    fs::create_directory_symlink(dir, root / "bus/pci/devices" / dir.filename());
    std::ofstream(dir / "vendor") << vendor << "\n";
    std::ofstream(dir / "class") << klass << "\n";
  }
};

TEST(NicProbe, TiesAreBrokenByTheGpusIndexOnTheNodeNotItsCudaOrdinal) {
  TiedSysfs sys;
  EXPECT_EQ(node_gpu_index(sys.root.string(), "00000000:0A:00.0"), 0);
  EXPECT_EQ(node_gpu_index(sys.root.string(), "0000:1b:00.0"), 1);
  EXPECT_EQ(node_gpu_index(sys.root.string(), "0000:1E:00.0"), 2);
  EXPECT_EQ(node_gpu_index(sys.root.string(), "0000:05:00.0"), std::nullopt) << "a bridge is no GPU";
  const auto a = nic_details(sys.root.string(), "0000:1B:00.0", "", "");
  const auto b = nic_details(sys.root.string(), "0000:1E:00.0", "", "");
  ASSERT_TRUE(a["nic"].is_object()) << a.dump();
  ASSERT_TRUE(b["nic"].is_object()) << b.dump();
  EXPECT_EQ(a["nic"]["device"], "mlx5_1") << a.dump();  // node index 1 mod 2
  EXPECT_EQ(b["nic"]["device"], "mlx5_0") << b.dump();  // node index 2 mod 2
  // A topology file replaces the PCI tree NCCL reads: the choice is unknown.
  const auto topo = nic_details(sys.root.string(), "0000:1B:00.0", "", "/etc/nccl/topo.xml");
  EXPECT_TRUE(topo["nic"].is_null()) << topo.dump();
  EXPECT_NE(topo.value("nic_note", "").find("unknown: NCCL_TOPO_FILE=/etc/nccl/topo.xml"), std::string::npos) << topo.dump();
}

}  // namespace
}  // namespace gpuscale::cuda
