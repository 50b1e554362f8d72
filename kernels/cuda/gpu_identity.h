#pragma once
// Who a GPU is, as the expected-peak table needs it: the driver's name, and as a second key the PCI
// device id (read from sysfs: the CUDA runtime reports the bus position, not the product id), the
// compute capability and the SM count. The CUDA device writes these into DeviceInfo.details under the
// keys below; the peak table reads them back. Pure, so it is unit-tested without a GPU.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/cuda/cuda_plan.h"
#include "kernels/device.h"

namespace gpuscale::cuda {

inline constexpr const char* kDetailPciDeviceId = "pci_device_id";           // "0x2335" or null
inline constexpr const char* kDetailComputeCapability = "compute_capability";  // "9.0"
inline constexpr const char* kDetailSmCount = "sm_count";                      // 132

struct GpuIdentity {
  std::string name;
  std::optional<std::uint32_t> pci_device_id;
  std::optional<ComputeCapability> cc;
  std::optional<int> sm_count;
};

GpuIdentity gpu_identity(const DeviceInfo& info);

// "0x2335" (also "2335", upper case) -> 0x2335; nullopt unless 1 to 4 hex digits.
std::optional<std::uint32_t> parse_pci_id(std::string_view text);
std::string format_pci_id(std::uint32_t id);  // "0x2335"
// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (as nvidia-smi prints it) from the 16 UUID bytes.
std::string format_gpu_uuid(const unsigned char (&bytes)[16]);
// The product id of the PCI function at `bus_id` ("0000:1B:00.0" as cudaDeviceGetPCIBusId writes it)
// from <sysfs_root>/bus/pci/devices/<bus id, lower case>/device; nullopt when unreadable.
std::optional<std::uint32_t> read_pci_device_id(const std::string& sysfs_root, std::string_view bus_id);

}  // namespace gpuscale::cuda
