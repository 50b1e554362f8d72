#include "kernels/cuda/gpu_identity.h"

#include <cctype>
#include <charconv>
#include <fstream>

#include <fmt/format.h>

namespace gpuscale::cuda {

GpuIdentity gpu_identity(const DeviceInfo& info) {
  GpuIdentity id;
  id.name = info.name;
  const auto& d = info.details;
  if (auto it = d.find(kDetailPciDeviceId); it != d.end() && it->is_string())
    id.pci_device_id = parse_pci_id(it->get<std::string>());
  if (auto it = d.find(kDetailComputeCapability); it != d.end() && it->is_string())
    id.cc = parse_cc(it->get<std::string>());
  if (auto it = d.find(kDetailSmCount); it != d.end() && it->is_number_integer()) id.sm_count = it->get<int>();
  return id;
}

std::optional<std::uint32_t> parse_pci_id(std::string_view text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  if (text.empty() || text.size() > 4) return std::nullopt;
  std::uint32_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 16);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string format_pci_id(std::uint32_t id) { return fmt::format("0x{:04x}", id); }

std::string format_gpu_uuid(const unsigned char (&b)[16]) {
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", b[i]);
  }
  return out;
}

std::optional<std::uint32_t> read_pci_device_id(const std::string& sysfs_root, std::string_view bus_id) {
  std::string lower(bus_id);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::ifstream f(sysfs_root + "/bus/pci/devices/" + lower + "/device");
  std::string line;
  if (!f || !std::getline(f, line)) return std::nullopt;
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  return parse_pci_id(line);
}

}  // namespace gpuscale::cuda
