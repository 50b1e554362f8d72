#pragma once
// The sysfs folder the CUDA device reads the machine's PCI tree from (its GPU's PCI device id, the
// cores of the GPU's NUMA node, the network port nearest the GPU): /sys, or, in tests only,
// GPUSCALE_TEST_SYSFS_ROOT=DIR, a tree laid out as the kernel's (Documentation/ABI/testing/sysfs-bus-pci,
// Documentation/ABI/stable/sysfs-class-infiniband) that the test built, so the emulated GPU node's
// e2e cases run the NIC choice and the NUMA binding on a PCI tree whose answers they know (as
// GPUSCALE_TEST_HOSTS, world/test_hosts.h, makes the ranks of one machine act as nodes). Never set it on
// a real run: what the result file records would describe the fake tree, not the machine.
#include <string>
#include <string_view>

namespace gpuscale {

inline constexpr const char* kTestSysfsRootEnv = "GPUSCALE_TEST_SYSFS_ROOT";
inline constexpr const char* kSysfsRoot = "/sys";

// The folder the variable's text names. Throws gpuscale::Error (exit 2), one line naming
// GPUSCALE_TEST_SYSFS_ROOT, when the text is empty, a relative path (each rank would resolve it
// against its own working directory) or not an existing folder (a typo would otherwise read as a
// machine with no PCI devices and no NIC, and every choice would quietly say "unknown").
std::string parse_test_sysfs_root(std::string_view text);

// kSysfsRoot, or parse_test_sysfs_root of the variable when it is set: the one place every reader of
// the machine's sysfs tree asks.
std::string sysfs_root();

}  // namespace gpuscale
