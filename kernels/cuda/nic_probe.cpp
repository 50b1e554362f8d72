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

nlohmann::json nic_details(const std::string& sysfs_root, std::string_view bus_id, int gpu_index, std::string_view filter) {
  const auto choice = nearest_nic(read_pci_path(sysfs_root, bus_id), gpu_index, read_nic_ports(sysfs_root), filter);
  if (!choice.nic) return {{"nic", nullptr}, {"nic_note", choice.rule}};
  const auto& n = *choice.nic;
  return {{"nic", {{"device", n.device}, {"port", n.port}, {"pci_bus_id", fs::path(n.pci_path).filename().string()}, {"rule", choice.rule}}}};
}

}  // namespace gpuscale::cuda
