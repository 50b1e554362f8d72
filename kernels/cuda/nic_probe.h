#pragma once
// The seam between sysfs and the NIC choice (nic_plan.h): the network ports of the machine and the PCI
// path of a GPU, read from a sysfs tree (tests point it at a fake one), and the result as the CUDA
// device records it in its details.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/cuda/nic_plan.h"

namespace gpuscale::cuda {

// Every port of <sysfs_root>/class/infiniband/*/ports/*, with its device's PCI path and whether its
// state is ACTIVE; sorted by device and port. Nothing when the folder is absent.
std::vector<NicPort> read_nic_ports(const std::string& sysfs_root);

// The PCI path of the function at `bus_id` ("0000:1B:00.0" or CUDA's "00000000:1B:00.0"):
// <sysfs_root>/bus/pci/devices/<id> with its links resolved; "" when there is none.
std::string read_pci_path(const std::string& sysfs_root, std::string_view bus_id);

// The GPU at `bus_id`'s index among the node's GPUs (NVIDIA's vendor id, display class 0x0300 or 3D
// class 0x0302) in bus-id order; nullopt when it is not among them. sysfs, not CUDA, and not NVML:
// CUDA_VISIBLE_DEVICES hides the other GPUs from CUDA, NVML lives in health/ (above this room) and may
// be absent from a container, while /sys/bus/pci lists every device the node has, as NCCL reads it.
std::optional<int> node_gpu_index(const std::string& sysfs_root, std::string_view bus_id);

// details.nic and details.nic_note of the GPU at `bus_id`, NCCL_IB_HCA as `filter`, NCCL_TOPO_FILE as
// `topo_file` (empty: unset): {"nic": {device, port, pci_bus_id, rule}} or {"nic": null, "nic_note": why}.
nlohmann::json nic_details(const std::string& sysfs_root, std::string_view bus_id, std::string_view filter,
                           std::string_view topo_file);

}  // namespace gpuscale::cuda
