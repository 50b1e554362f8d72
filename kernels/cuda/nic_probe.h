#pragma once
// The seam between sysfs and the NIC choice (nic_plan.h): the network ports of the machine and the PCI
// path of a GPU, read from a sysfs tree (tests point it at a fake one), and the result as the CUDA
// device records it in its details.
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

// details.nic and details.nic_note of the GPU at `bus_id` (CUDA ordinal `gpu_index`), NCCL_IB_HCA as
// `filter`: {"nic": {device, port, pci_bus_id, rule}} or {"nic": null, "nic_note": why}.
nlohmann::json nic_details(const std::string& sysfs_root, std::string_view bus_id, int gpu_index, std::string_view filter);

}  // namespace gpuscale::cuda
