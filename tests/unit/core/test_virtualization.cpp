// core/virtualization: the hypervisor named from CPUID's signature, /sys/hypervisor and DMI; bare metal
// said as such when CPUID's hypervisor bit is clear; nothing claimed without evidence; the evidence
// kept, escaped for a terminal.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/virtualization.h"

namespace gpuscale {
namespace {

TEST(Virtualization, HypervisorsFromTheirEvidence) {
  auto v = classify_virtualization({true, "KVMKVMKVM", "", "", ""});  // this project's build VM
  EXPECT_EQ(v.virtual_machine, true);
  EXPECT_EQ(v.hypervisor, "KVM");
  EXPECT_EQ(v.evidence, (std::vector<std::string>{"cpuid: hypervisor bit set", "cpuid: KVMKVMKVM"}));
  v = classify_virtualization({true, "Microsoft Hv", "", "Microsoft Corporation", "Virtual Machine"});
  EXPECT_EQ(v.hypervisor, "Hyper-V");
  EXPECT_EQ(v.platform, "Microsoft Azure");
  v = classify_virtualization({true, "KVMKVMKVM", "", "Amazon EC2", "p5.48xlarge"});
  EXPECT_EQ(v.platform, "Amazon EC2");
  v = classify_virtualization({std::nullopt, "", "xen", "", ""});  // an Arm or PV Xen guest: no CPUID
  EXPECT_EQ(v.virtual_machine, true);
  EXPECT_EQ(v.hypervisor, "Xen");
  v = classify_virtualization({std::nullopt, "", "", "QEMU", "Standard PC (Q35 + ICH9, 2009)"});
  EXPECT_EQ(v.virtual_machine, true);
  EXPECT_EQ(v.hypervisor, "");  // a QEMU machine, hypervisor not named by the guest's CPUID
}

TEST(Virtualization, BareMetalAndNoEvidence) {
  auto v = classify_virtualization({false, "", "", "Supermicro", "SYS-821GE-TNHR"});
  EXPECT_EQ(v.virtual_machine, false);
  EXPECT_EQ(v.hypervisor, "");
  // A cloud's bare-metal instance carries the cloud's vendor: a platform, not a virtual machine.
  v = classify_virtualization({false, "", "", "Amazon EC2", "p5.metal"});
  EXPECT_EQ(v.virtual_machine, false);
  EXPECT_EQ(v.platform, "Amazon EC2");
  v = classify_virtualization({});
  EXPECT_FALSE(v.virtual_machine);
  EXPECT_TRUE(v.evidence.empty());
  const auto j = to_json(v);
  EXPECT_TRUE(j["virtual_machine"].is_null());
  EXPECT_TRUE(j["hypervisor"].is_null());
}

TEST(Virtualization, EvidenceIsEscaped) {
  const auto v = classify_virtualization({std::nullopt, "", "", "ven\x1b]0;x\adore", ""});
  ASSERT_EQ(v.evidence.size(), 1u);
  EXPECT_EQ(v.evidence[0].find('\x1b'), std::string::npos) << v.evidence[0];
}

TEST(Virtualization, ThisHostReadsWithoutThrowing) {
  const auto e = read_virtualization_evidence("/nonexistent-root");
  EXPECT_TRUE(e.dmi_sys_vendor.empty());
  EXPECT_TRUE(e.sys_hypervisor_type.empty());
  (void)classify_virtualization(e);
}

}  // namespace
}  // namespace gpuscale
