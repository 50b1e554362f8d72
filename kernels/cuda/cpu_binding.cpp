#include "kernels/cuda/cpu_binding.h"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace gpuscale {
namespace {

std::optional<int> to_int(std::string_view s) {
  int v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

std::set<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::set<int> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.insert(c);
  return out;
}

}  // namespace

std::optional<std::set<int>> parse_cpulist(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  std::set<int> out;
  if (text.empty()) return out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto next = text.find(',', pos);
    if (next == std::string_view::npos) next = text.size();
    const auto item = text.substr(pos, next - pos);
    const auto dash = item.find('-');
    const auto lo = to_int(item.substr(0, dash));
    const auto hi = dash == std::string_view::npos ? lo : to_int(item.substr(dash + 1));
    if (!lo || !hi || *hi < *lo || *hi >= CPU_SETSIZE) return std::nullopt;
    for (int c = *lo; c <= *hi; ++c) out.insert(c);
    pos = next + 1;
  }
  return out;
}

std::string format_cpulist(const std::set<int>& cpus) {
  std::string out;
  for (auto it = cpus.begin(); it != cpus.end();) {
    const int lo = *it;
    int hi = lo;
    while (++it != cpus.end() && *it == hi + 1) ++hi;
    out += fmt::format("{}{}", out.empty() ? "" : ",", lo == hi ? std::to_string(lo) : fmt::format("{}-{}", lo, hi));
  }
  return out;
}

CpuBinding choose_cpu_binding(const std::set<int>& allowed, const std::optional<std::set<int>>& gpu_node_cpus,
                              int numa_node, std::string_view pci_bus_id, bool disabled) {
  CpuBinding b{allowed, false, ""};
  const auto cpus = format_cpulist(allowed);
  if (disabled) {
    b.rule = fmt::format("not bound (GPUSCALE_CPU_BIND=none): cores {} as the launcher placed the rank", cpus);
    return b;
  }
  if (numa_node < 0 || !gpu_node_cpus || gpu_node_cpus->empty()) {
    b.rule = fmt::format("not bound: the NUMA node of GPU {} is unknown; cores {} as the launcher placed the rank",
                         pci_bus_id, cpus);
    return b;
  }
  std::set<int> both;
  std::set_intersection(allowed.begin(), allowed.end(), gpu_node_cpus->begin(), gpu_node_cpus->end(),
                        std::inserter(both, both.end()));
  if (both.empty()) {
    b.rule = fmt::format("not bound: the launcher placed the rank on cores {}, none of them on NUMA node {} of GPU {} "
                         "(cores {})",
                         cpus, numa_node, pci_bus_id, format_cpulist(*gpu_node_cpus));
    return b;
  }
  b.cpus = both;
  b.bound = both != allowed;
  b.rule = fmt::format("{} cores {} of NUMA node {} (GPU {})", b.bound ? "bound to" : "already on", format_cpulist(both),
                       numa_node, pci_bus_id);
  return b;
}

CpuBinding bind_to_gpu_numa_node(const std::string& sysfs_root, std::string_view pci_bus_id) {
  std::string id(pci_bus_id);
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return std::tolower(c); });
  // CUDA gives an 8-digit PCI domain ("00000000:1B:00.0"); sysfs names the device with 4.
  if (id.size() == 16 && id.compare(0, 4, "0000") == 0) id.erase(0, 4);
  const std::string dir = sysfs_root + "/bus/pci/devices/" + id;
  const auto node = to_int(read_line(dir + "/numa_node"));
  const auto node_cpus = parse_cpulist(read_line(dir + "/local_cpulist"));
  const char* env = std::getenv("GPUSCALE_CPU_BIND");
  const bool disabled = env && std::string_view(env) == "none";
  auto b = choose_cpu_binding(allowed_cpus(), node_cpus, node ? *node : -1, pci_bus_id, disabled);
  if (b.bound) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : b.cpus) CPU_SET(c, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
      b.bound = false;
      b.cpus = allowed_cpus();
      b.rule = fmt::format("not bound: sched_setaffinity to cores {} failed", format_cpulist(b.cpus));
    }
  }
  return b;
}

}  // namespace gpuscale
