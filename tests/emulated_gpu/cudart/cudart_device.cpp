// Device management, versions and errors of the emulated libcudart.so.13. Each definition is checked
// against NVIDIA's declaration in /usr/local/cuda/include/cuda_runtime_api.h.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <utility>

#include "tests/emulated_gpu/cudart/runtime_state.h"

using namespace gpuscale_emu;
using gpuscale_emu::cudart::result;

namespace {

struct PciAddress {
  unsigned domain = 0, bus = 0, dev = 0;
};
PciAddress pci_address(const std::string& bus_id) {  // "00000000:18:00.0"
  PciAddress a;
  std::sscanf(bus_id.c_str(), "%x:%x:%x", &a.domain, &a.bus, &a.dev);
  return a;
}

// cudaUUID_t's 16 bytes from "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (or "MIG-..."): the hex digits
// after the prefix, as nvidia-smi prints the same bytes.
cudaUUID_t uuid_bytes(const std::string& uuid) {
  cudaUUID_t out{};
  std::string hex;
  for (char c : uuid.substr(std::min<std::size_t>(4, uuid.size())))
    if (std::isxdigit(static_cast<unsigned char>(c))) hex += c;
  for (std::size_t i = 0; i < 16 && 2 * i + 1 < hex.size(); ++i)
    out.bytes[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

bool valid(int ordinal) { return ordinal >= 0 && ordinal < device_count(); }

// Peer access enabled from the first device to the second (per context, so per device here).
std::mutex g_peer_mu;
std::set<std::pair<int, int>> g_peers;

bool can_access_peer(int dev, int peer) {
  // Peers are two distinct GPUs of this node; a MIG instance has none (MIG User Guide: "GPU to GPU P2P
  // (both PCIe and NVLink) is not supported").
  return valid(dev) && valid(peer) && dev != peer && !device(dev).is_mig && !device(peer).is_mig;
}

// Compute capability 9.0's limits: CUDA C Programming Guide, "Compute Capabilities", table "Technical
// Specifications per Compute Capability" (9.0 column).
constexpr int kSharedPerBlock = 48 << 10, kSharedPerBlockOptin = 227 << 10, kSharedPerSm = 228 << 10;
constexpr int kRegsPerBlock = 64 << 10, kThreadsPerSm = 2048;

}  // namespace

EMU_CUDART_API cudaError_t cudaGetDeviceCount(int* count) {
  if (!count) return result(cudaErrorInvalidValue);
  *count = device_count();
  // cudaGetDeviceCount: "cudaErrorNoDevice" when no CUDA-capable device is found
  return result(*count == 0 ? cudaErrorNoDevice : cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaSetDevice(int device) {
  if (!valid(device)) return result(cudaErrorInvalidDevice);  // cudaSetDevice: "cudaErrorInvalidDevice"
  set_current_device(device);
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaGetDevice(int* device) {
  if (!device) return result(cudaErrorInvalidValue);
  *device = current_device();
  return result(device_count() == 0 ? cudaErrorNoDevice : cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int ordinal) {
  if (!prop) return result(cudaErrorInvalidValue);
  if (!valid(ordinal)) return result(cudaErrorInvalidDevice);
  const Device& d = device(ordinal);
  const GpuModel& m = d.model;
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "%s", d.name.c_str());
  prop->uuid = uuid_bytes(d.uuid);
  prop->totalGlobalMem = d.memory_total;
  prop->sharedMemPerBlock = kSharedPerBlock;
  prop->regsPerBlock = kRegsPerBlock;
  prop->warpSize = m.warp_size;
  prop->memPitch = 2147483647;
  prop->maxThreadsPerBlock = m.max_threads_per_block;
  prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 2147483647;
  prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
  prop->totalConstMem = 64 << 10;
  prop->major = m.cc_major;
  prop->minor = m.cc_minor;
  prop->textureAlignment = 512;
  prop->texturePitchAlignment = 32;
  prop->multiProcessorCount = m.sm_count;
  prop->canMapHostMemory = 1;
  prop->concurrentKernels = 1;
  prop->ECCEnabled = 1;
  const PciAddress a = pci_address(d.pci_bus_id);
  prop->pciBusID = static_cast<int>(a.bus);
  prop->pciDeviceID = static_cast<int>(a.dev);
  prop->pciDomainID = static_cast<int>(a.domain);
  prop->asyncEngineCount = 2;
  prop->unifiedAddressing = 1;
  prop->memoryBusWidth = m.memory_bus_width;
  prop->l2CacheSize = m.l2_bytes;
  prop->maxThreadsPerMultiProcessor = kThreadsPerSm;
  prop->streamPrioritiesSupported = 1;
  prop->sharedMemPerMultiprocessor = kSharedPerSm;
  prop->regsPerMultiprocessor = kRegsPerBlock;
  prop->managedMemory = 1;
  prop->sharedMemPerBlockOptin = kSharedPerBlockOptin;
  prop->maxBlocksPerMultiProcessor = m.max_blocks_per_sm;
  prop->reservedSharedMemPerBlock = 1 << 10;
  prop->hostNumaId = -1;
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int ordinal) {
  if (!value) return result(cudaErrorInvalidValue);
  if (!valid(ordinal)) return result(cudaErrorInvalidDevice);
  const Device& d = device(ordinal);
  const GpuModel& m = d.model;
  const PciAddress a = pci_address(d.pci_bus_id);
  switch (attr) {  // units as cuda_runtime_api.h's enum cudaDeviceAttr (driver_types.h) documents them
    case cudaDevAttrClockRate: *value = m.sm_clock_mhz * 1000; break;         // "Peak clock frequency in kilohertz"
    case cudaDevAttrMemoryClockRate: *value = m.mem_clock_mhz * 1000; break;  // "Peak memory clock frequency in kilohertz"
    case cudaDevAttrGlobalMemoryBusWidth: *value = m.memory_bus_width; break;  // "in bits"
    case cudaDevAttrMultiProcessorCount: *value = m.sm_count; break;
    case cudaDevAttrComputeCapabilityMajor: *value = m.cc_major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = m.cc_minor; break;
    case cudaDevAttrMaxThreadsPerBlock: *value = m.max_threads_per_block; break;
    case cudaDevAttrWarpSize: *value = m.warp_size; break;
    case cudaDevAttrL2CacheSize: *value = m.l2_bytes; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = kSharedPerBlock; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = kThreadsPerSm; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = m.max_blocks_per_sm; break;
    case cudaDevAttrPciBusId: *value = static_cast<int>(a.bus); break;
    case cudaDevAttrPciDeviceId: *value = static_cast<int>(a.dev); break;
    case cudaDevAttrPciDomainId: *value = static_cast<int>(a.domain); break;
    // Not modelled: refused rather than answered with a made-up figure.
    default: return result(cudaErrorInvalidValue);
  }
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaDeviceGetPCIBusId(char* pciBusId, int len, int ordinal) {
  if (!pciBusId || len <= 0) return result(cudaErrorInvalidValue);
  if (!valid(ordinal)) return result(cudaErrorInvalidDevice);
  // cudaDeviceGetPCIBusId: "[domain]:[bus]:[device].[function] where domain, bus, device, and function
  // are all hexadecimal values"; the driver writes a 4-digit domain ("0000:1B:00.0").
  const PciAddress a = pci_address(device(ordinal).pci_bus_id);
  std::snprintf(pciBusId, static_cast<std::size_t>(len), "%04X:%02X:%02X.0", a.domain, a.bus, a.dev);
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaDeviceCanAccessPeer(int* canAccessPeer, int ordinal, int peerDevice) {
  if (!canAccessPeer) return result(cudaErrorInvalidValue);
  if (!valid(ordinal) || !valid(peerDevice)) return result(cudaErrorInvalidDevice);
  *canAccessPeer = can_access_peer(ordinal, peerDevice) ? 1 : 0;
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags) {
  if (!valid(peerDevice)) return result(cudaErrorInvalidDevice);
  if (flags != 0) return result(cudaErrorInvalidValue);  // cudaDeviceEnablePeerAccess: "flags ... must be 0"
  if (!can_access_peer(current_device(), peerDevice)) return result(cudaErrorPeerAccessUnsupported);
  std::lock_guard<std::mutex> lock(g_peer_mu);
  // "cudaErrorPeerAccessAlreadyEnabled ... if direct access ... has already been enabled"
  if (!g_peers.insert({current_device(), peerDevice}).second) return result(cudaErrorPeerAccessAlreadyEnabled);
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaDeviceSynchronize(void) {
  if (!cudart::have_device()) return result(cudaErrorNoDevice);
  wait_for(device_clock_us(current_device()));  // "Blocks until the device has completed all preceding requested tasks"
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaRuntimeGetVersion(int* runtimeVersion) {
  if (!runtimeVersion) return result(cudaErrorInvalidValue);
  *runtimeVersion = CUDART_VERSION;  // 13000 in CUDA 13.0's cuda_runtime_api.h: the runtime this emulates
  return cudaSuccess;
}

EMU_CUDART_API cudaError_t cudaDriverGetVersion(int* driverVersion) {
  if (!driverVersion) return result(cudaErrorInvalidValue);
  const char* v = std::getenv("GPUSCALE_EMU_DRIVER_VERSION");  // a test's older or newer driver
  *driverVersion = v && *v ? std::atoi(v) : driver_cuda_version();
  return cudaSuccess;
}
