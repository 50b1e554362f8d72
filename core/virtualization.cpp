#include "core/virtualization.h"

#include <array>
#include <cstring>
#include <fstream>
#include <utility>

#include <nlohmann/json.hpp>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "core/term_text.h"

namespace gpuscale {
namespace {

// CPUID leaf 0x40000000 vendor signatures of the common hypervisors.
constexpr std::array<std::pair<const char*, const char*>, 10> kSignatures = {{
    {"KVMKVMKVM", "KVM"},
    {"Microsoft Hv", "Hyper-V"},
    {"VMwareVMware", "VMware"},
    {"XenVMMXenVMM", "Xen"},
    {"TCGTCGTCGTCG", "QEMU (TCG)"},
    {"VBoxVBoxVBox", "VirtualBox"},
    {" lrpepyh  vr", "Parallels"},
    {"ACRNACRNACRN", "ACRN"},
    {"bhyve bhyve ", "bhyve"},
    {"QNXQVMBSQG", "QNX"},
}};

// DMI vendors that name a cloud, and the hypervisor products they imply when CPUID says nothing.
constexpr std::array<std::pair<const char*, const char*>, 6> kPlatforms = {{
    {"Amazon EC2", "Amazon EC2"},
    {"Google", "Google Compute Engine"},
    {"Microsoft Corporation", "Microsoft Azure"},
    {"OpenStack Foundation", "OpenStack"},
    {"Oracle Corporation", "Oracle Cloud"},
    {"Alibaba Cloud", "Alibaba Cloud"},
}};

bool contains(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line.substr(0, 200);
}

}  // namespace

Virtualization classify_virtualization(const VirtEvidence& e) {
  Virtualization v;
  if (e.cpuid_hypervisor_bit) {
    v.evidence.push_back(*e.cpuid_hypervisor_bit ? "cpuid: hypervisor bit set" : "cpuid: hypervisor bit clear");
    v.virtual_machine = *e.cpuid_hypervisor_bit;
  }
  if (!e.cpuid_vendor.empty()) {
    v.evidence.push_back("cpuid: " + terminal_safe(e.cpuid_vendor));
    for (const auto& [sig, name] : kSignatures)
      if (e.cpuid_vendor == sig) v.hypervisor = name;
    // Hyper-V's signature is also offered by KVM and others for Windows guests: the DMI says which.
  }
  if (!e.sys_hypervisor_type.empty()) {
    v.evidence.push_back("sys/hypervisor: " + terminal_safe(e.sys_hypervisor_type));
    v.virtual_machine = true;
    if (v.hypervisor.empty() && e.sys_hypervisor_type == "xen") v.hypervisor = "Xen";
  }
  if (!e.dmi_sys_vendor.empty() || !e.dmi_product_name.empty())
    v.evidence.push_back("dmi: " + terminal_safe(e.dmi_sys_vendor) + " / " + terminal_safe(e.dmi_product_name));
  for (const auto& [vendor, platform] : kPlatforms)
    if (e.dmi_sys_vendor.rfind(vendor, 0) == 0) v.platform = platform;
  const bool dmi_vm = contains(e.dmi_sys_vendor, "QEMU") || contains(e.dmi_product_name, "KVM") ||
                      contains(e.dmi_product_name, "Virtual Machine") || contains(e.dmi_sys_vendor, "VMware") ||
                      contains(e.dmi_product_name, "VirtualBox") || contains(e.dmi_sys_vendor, "Xen");
  if (dmi_vm && !v.virtual_machine) v.virtual_machine = true;
  // A cloud's bare-metal instances (".metal") carry its vendor too: the vendor alone says nothing.
  return v;
}

nlohmann::json to_json(const Virtualization& v) {
  auto text = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
  return {{"virtual_machine", v.virtual_machine ? nlohmann::json(*v.virtual_machine) : nlohmann::json(nullptr)},
          {"hypervisor", text(v.hypervisor)},
          {"platform", text(v.platform)},
          {"evidence", v.evidence}};
}

VirtEvidence read_virtualization_evidence(const std::string& root) {
  VirtEvidence e;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    e.cpuid_hypervisor_bit = (c >> 31) & 1U;
    if (*e.cpuid_hypervisor_bit) {
      __cpuid(0x40000000, a, b, c, d);
      char sig[13] = {};
      std::memcpy(sig, &b, 4);
      std::memcpy(sig + 4, &c, 4);
      std::memcpy(sig + 8, &d, 4);
      e.cpuid_vendor.assign(sig, strnlen(sig, 12));
    }
  }
#endif
  e.sys_hypervisor_type = first_line(root + "/sys/hypervisor/type");
  e.dmi_sys_vendor = first_line(root + "/sys/class/dmi/id/sys_vendor");
  e.dmi_product_name = first_line(root + "/sys/class/dmi/id/product_name");
  return e;
}

}  // namespace gpuscale
