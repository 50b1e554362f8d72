#include "kernels/cuda/nic_plan.h"

#include <algorithm>
#include <climits>

#include <fmt/format.h>

namespace gpuscale::cuda {
namespace {

std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < path.size()) {
    const auto next = std::min(path.find('/', pos), path.size());
    if (next > pos) out.push_back(path.substr(pos, next - pos));
    pos = next + 1;
  }
  return out;
}

}  // namespace

int pci_distance(std::string_view a, std::string_view b) {
  const auto x = components(a), y = components(b);
  std::size_t common = 0;
  while (common < x.size() && common < y.size() && x[common] == y[common]) ++common;
  return static_cast<int>((x.size() - common) + (y.size() - common));
}

bool hca_selected(std::string_view filter, const NicPort& p) {
  const bool exclude = !filter.empty() && filter.front() == '^';
  if (exclude) filter.remove_prefix(1);
  const bool exact = !filter.empty() && filter.front() == '=';
  if (exact) filter.remove_prefix(1);
  if (filter.empty()) return true;
  bool listed = false;
  std::size_t pos = 0;
  while (pos <= filter.size() && !listed) {
    const auto next = std::min(filter.find(',', pos), filter.size());
    auto entry = filter.substr(pos, next - pos);
    pos = next + 1;
    const auto colon = entry.find(':');
    const auto name = entry.substr(0, colon);
    if (name.empty()) continue;
    const bool name_ok = exact ? p.device == name : std::string_view(p.device).substr(0, name.size()) == name;
    const bool port_ok = colon == std::string_view::npos || entry.substr(colon + 1) == std::to_string(p.port);
    listed = name_ok && port_ok;
  }
  return exclude ? !listed : listed;
}

NicChoice nearest_nic(std::string_view gpu_path, std::optional<int> node_index, std::vector<NicPort> ports,
                      std::string_view filter, std::string_view topo_file) {
  if (!topo_file.empty())
    return {std::nullopt, fmt::format("unknown: NCCL_TOPO_FILE={} gives NCCL a topology of its own in place of the PCI tree", topo_file)};
  if (gpu_path.empty()) return {std::nullopt, "the GPU's PCI path is unknown (no sysfs entry for its bus id)"};
  const auto total = ports.size();
  std::erase_if(ports, [&](const NicPort& p) { return !p.active || !hca_selected(filter, p); });
  if (ports.empty())
    return {std::nullopt, total == 0 ? "no network port in /sys/class/infiniband (NCCL uses sockets or another net plugin)"
                                     : fmt::format("none of the {} ports in /sys/class/infiniband is active{}", total,
                                                   filter.empty() ? "" : fmt::format(" and selected by NCCL_IB_HCA={}", filter))};
  int best = INT_MAX;
  for (const auto& p : ports) best = std::min(best, pci_distance(gpu_path, p.pci_path));
  std::erase_if(ports, [&](const NicPort& p) { return pci_distance(gpu_path, p.pci_path) != best; });
  std::sort(ports.begin(), ports.end(), [](const auto& a, const auto& b) {
    return a.device != b.device ? a.device < b.device : a.port < b.port;
  });
  if (ports.size() > 1 && !node_index) {
    std::string tied;
    for (const auto& p : ports) tied += fmt::format("{}{}:{}", tied.empty() ? "" : ", ", p.device, p.port);
    return {std::nullopt, fmt::format("unknown: {} ports equally near ({}) and the GPU's index among the node's GPUs "
                                      "is unknown",
                                      ports.size(), tied)};
  }
  const int index = node_index.value_or(0);
  const auto pick = static_cast<std::size_t>(std::max(index, 0)) % ports.size();
  auto rule = fmt::format("the active port nearest the GPU by PCI path ({} hops){}", best,
                          ports.size() > 1 ? fmt::format(", of {} equally near: the GPU's index among the node's GPUs "
                                                         "by bus id, {}, mod {}",
                                                         ports.size(), index, ports.size())
                                           : std::string());
  if (!filter.empty()) rule += fmt::format("; NCCL_IB_HCA={}", filter);
  return {ports[pick], rule + "; as NCCL chooses unless a topology file or NCCL_NET says otherwise"};
}

}  // namespace gpuscale::cuda
