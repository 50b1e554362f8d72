#include "kernels/cuda/nic_probe.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>

namespace gpuscale::cuda {
namespace {

namespace fs = std::filesystem;

std::string first_line(const fs::path& p) {
  std::ifstream f(p);
  std::string line;
  std::getline(f, line);
  return line;
}

std::string resolved(const fs::path& p) {
  std::error_code ec;
  const auto r = fs::canonical(p, ec);
  return ec ? std::string() : r.string();
}

}  // namespace

std::vector<NicPort> read_nic_ports(const std::string& sysfs_root) {
  std::vector<NicPort> out;
  std::error_code ec;
  for (const auto& dev : fs::directory_iterator(fs::path(sysfs_root) / "class/infiniband", ec)) {
    const auto path = resolved(dev.path() / "device");
    std::error_code ports_ec;
    for (const auto& port : fs::directory_iterator(dev.path() / "ports", ports_ec)) {
      const auto name = port.path().filename().string();
      int n = 0;
      const auto r = std::from_chars(name.data(), name.data() + name.size(), n);
      if (r.ec != std::errc() || r.ptr != name.data() + name.size() || n < 1) continue;
      const auto state = first_line(port.path() / "state");  // "4: ACTIVE"
      out.push_back({dev.path().filename().string(), n, path, state.find("ACTIVE") != std::string::npos});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.device != b.device ? a.device < b.device : a.port < b.port; });
  return out;
}

std::string read_pci_path(const std::string& sysfs_root, std::string_view bus_id) {
  std::string id(bus_id);
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (id.size() == 16 && id.compare(0, 4, "0000") == 0) id.erase(0, 4);  // CUDA's 8-digit domain; sysfs has 4
  return resolved(fs::path(sysfs_root) / "bus/pci/devices" / id);
}

std::optional<int> node_gpu_index(const std::string& sysfs_root, std::string_view bus_id) {
  const auto mine = fs::path(read_pci_path(sysfs_root, bus_id)).filename().string();
  if (mine.empty()) return std::nullopt;
  std::vector<std::string> gpus;  // "0000:1b:00.0": fixed-width hex, so text order is bus-id order
  std::error_code ec;
  for (const auto& dev : fs::directory_iterator(fs::path(sysfs_root) / "bus/pci/devices", ec)) {
    const auto klass = first_line(dev.path() / "class");  // "0x030200": 3D controller
    if (first_line(dev.path() / "vendor") == "0x10de" && (klass.rfind("0x0302", 0) == 0 || klass.rfind("0x0300", 0) == 0))
      gpus.push_back(dev.path().filename().string());
  }
  std::sort(gpus.begin(), gpus.end());
  const auto at = std::find(gpus.begin(), gpus.end(), mine);
  if (at == gpus.end()) return std::nullopt;
  return static_cast<int>(at - gpus.begin());
}

nlohmann::json nic_details(const std::string& sysfs_root, std::string_view bus_id, std::string_view filter,
                           std::string_view topo_file) {
  const auto choice = nearest_nic(read_pci_path(sysfs_root, bus_id), node_gpu_index(sysfs_root, bus_id),
                                  read_nic_ports(sysfs_root), filter, topo_file);
  if (!choice.nic) return {{"nic", nullptr}, {"nic_note", choice.rule}};
  const auto& n = *choice.nic;
  return {{"nic", {{"device", n.device}, {"port", n.port}, {"pci_bus_id", fs::path(n.pci_path).filename().string()}, {"rule", choice.rule}}}};
}

}  // namespace gpuscale::cuda
