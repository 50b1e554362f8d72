#pragma once
// Binds a rank to the CPU cores of its GPU's NUMA node: host<->device copies (and the host threads that
// drive the GPU) run at the speed of the memory and PCIe root next to the GPU only when they run there.
// The decision is pure (which cores, and why); the seam reads sysfs and calls sched_setaffinity.
//
//   - The launcher's own binding is respected: the rank is bound to the GPU node's cores that it is
//     already allowed to use. When those two sets do not meet (the launcher bound it elsewhere) the
//     rank is left as it is, and the result file says so.
//   - GPUSCALE_CPU_BIND=none leaves every rank as the launcher placed it.
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace gpuscale {

struct CpuBinding {
  std::set<int> cpus;  // the rank's cores after binding (its allowed cores when not bound)
  bool bound = false;  // whether the rank's affinity was changed
  std::string rule;    // recorded in the result file: what was done and why
};

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; nullopt for text that is not a cpulist.
std::optional<std::set<int>> parse_cpulist(std::string_view text);
// {0,1,2,3,8} -> "0-3,8"
std::string format_cpulist(const std::set<int>& cpus);

// numa_node < 0: the GPU's node is unknown (sysfs says -1 on single-node machines).
CpuBinding choose_cpu_binding(const std::set<int>& allowed, const std::optional<std::set<int>>& gpu_node_cpus,
                              int numa_node, std::string_view pci_bus_id, bool disabled);

// The seam: reads <sysfs_root>/bus/pci/devices/<bus id>/{numa_node,local_cpulist} (sysfs_root:
// kernels/sysfs_root.h, /sys but for tests), decides, and applies it to the calling process (before any
// worker thread exists, so every later thread inherits it).
CpuBinding bind_to_gpu_numa_node(const std::string& sysfs_root, std::string_view pci_bus_id);

}  // namespace gpuscale
