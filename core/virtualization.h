#pragma once
// Whether this host is a virtual machine, and which hypervisor runs it (issue 28: virtualised GPUs
// named): a result measured in a guest shares its hardware in ways a bare-metal figure does not. The
// evidence is what the guest itself can read, each source kept so a reader can judge it:
//   - CPUID (x86): leaf 1 ECX bit 31, "hypervisor present", and leaf 0x40000000's vendor signature
//     ("KVMKVMKVM", "Microsoft Hv", "VMwareVMware", "XenVMMXenVMM", ...);
//   - /sys/hypervisor/type (Xen guests);
//   - DMI (/sys/class/dmi/id): sys_vendor and product_name ("QEMU", "Standard PC (Q35 + ICH9, 2009)",
//     "Amazon EC2", "Google Compute Engine", "Microsoft Corporation" with "Virtual Machine").
// classify_virtualization is pure (tests/unit/core/test_virtualization.cpp); read_virtualization_evidence
// is the thin reader.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gpuscale {

struct VirtEvidence {
  std::optional<bool> cpuid_hypervisor_bit;  // nullopt: not x86
  std::string cpuid_vendor;                  // leaf 0x40000000's 12 bytes, trailing NULs dropped
  std::string sys_hypervisor_type;           // /sys/hypervisor/type
  std::string dmi_sys_vendor, dmi_product_name;
};

struct Virtualization {
  std::optional<bool> virtual_machine;  // nullopt: nothing could tell
  std::string hypervisor;               // "KVM", "Hyper-V", "VMware", "Xen", ... ("" when none or unknown)
  std::string platform;                 // the DMI vendor when it names a cloud ("Amazon EC2", ...), else ""
  std::vector<std::string> evidence;    // "cpuid: hypervisor bit set", "cpuid: KVMKVMKVM", "dmi: QEMU ..."
};

Virtualization classify_virtualization(const VirtEvidence& e);
// {"virtual_machine": bool|null, "hypervisor": str|null, "platform": str|null, "evidence": [...]}
nlohmann::json to_json(const Virtualization& v);

// This host's evidence: CPUID where the CPU has it, the sysfs files where readable (a missing file is
// an empty string). `root` prefixes the sysfs paths (tests).
VirtEvidence read_virtualization_evidence(const std::string& root = "");

}  // namespace gpuscale
