#pragma once
// Which NIC a GPU's inter-node traffic leaves by (docs/fleet.md "Rails"), as a pure function of PCI
// paths, so it is unit-tested without a GPU or a NIC. NCCL gives each GPU the network port nearest it
// in the PCI tree (the same PCIe switch before the same host bridge before the other socket), and
// spreads GPUs over ports equally near; a rail-optimised node has one NIC under each GPU's switch.
// nic_probe.h reads the paths from sysfs; the CUDA device records the choice in its details ("nic").
//
// A PCI path is the device's sysfs directory with its links resolved, e.g.
// "/sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/0000:18:10.0/0000:1b:00.0": the root complex,
// the bridges on the way down, the device last.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale::cuda {

// One port of a network device (/sys/class/infiniband/<device>/ports/<port>).
struct NicPort {
  std::string device;    // "mlx5_3"
  int port = 1;          // 1-based, as NCCL names them ("mlx5_3:1")
  std::string pci_path;  // of the device
  bool active = true;    // state "4: ACTIVE": NCCL uses no other port
};

// The hops between two PCI paths: from each device up to the deepest bridge they share, both ways
// added (2 for two functions of one device's bridge, more across switches; the most across root
// complexes). Paths are compared component by component.
int pci_distance(std::string_view a, std::string_view b);

// NCCL_IB_HCA's filter: a comma list of device[:port] entries, matched as prefixes of the device name
// (exact with a leading '='), and excluding instead of selecting with a leading '^'. Empty: every port.
bool hca_selected(std::string_view filter, const NicPort& p);

struct NicChoice {
  std::optional<NicPort> nic;  // nullopt: none (the reason is `rule`)
  std::string rule;            // one line: how it was chosen, or why there is none
};

// The port a GPU at `gpu_path` sends through: of the active ports NCCL_IB_HCA (`filter`) selects, the
// nearest by pci_distance; among ports equally near, sorted by device and port, the (node_index mod
// their count)-th, as NCCL spreads GPUs over them. `node_index` is the GPU's place among all the
// node's GPUs in bus-id order (nic_probe.h's node_gpu_index), not its CUDA ordinal, which is 0 in
// every process that sees one GPU. Unknown (no choice, the rule says why): `gpu_path` empty, a tie
// with no node index, or `topo_file` (NCCL_TOPO_FILE) set, whose topology replaces the PCI tree.
NicChoice nearest_nic(std::string_view gpu_path, std::optional<int> node_index, std::vector<NicPort> ports,
                      std::string_view filter, std::string_view topo_file = {});

}  // namespace gpuscale::cuda
