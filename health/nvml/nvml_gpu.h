#pragma once
// Reading GPUs through the loaded NVML (the only code that calls NVML entry points). Each reading
// fills the plain structures of health/gpu_state.h; a call that fails marks its field: missing
// symbol, NVML_ERROR_NOT_SUPPORTED and NVML_ERROR_NO_PERMISSION as unsupported, anything else as an
// error, NVML_ERROR_GPU_IS_LOST also as gpu_lost. Nothing throws; the rest of the reading goes on.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "health/gpu_state.h"
#include "health/nvml/nvml_library.h"

namespace gpuscale::health {

class NvmlGpu {
 public:
  NvmlGpu(std::shared_ptr<const NvmlLibrary> lib, nvml::nvmlDevice_t handle, int index)
      : lib_(std::move(lib)), handle_(handle), index_(index) {}

  GpuIdentity identity() const;
  // The fast fields (the sampler's): when `unsupported`/`errors` are given, why a field is empty.
  GpuSample sample(double t, Reasons* unsupported = nullptr, Reasons* errors = nullptr) const;
  GpuCounters counters() const;
  // The total energy counter alone (mJ), read at a timed span's ends (core/timed_span.h); nullopt with
  // `why` when it cannot be read.
  std::optional<std::uint64_t> energy_mj(std::string* why) const;
  nvml::nvmlDevice_t handle() const { return handle_; }
  int index() const { return index_; }

 private:
  std::shared_ptr<const NvmlLibrary> lib_;
  nvml::nvmlDevice_t handle_;
  int index_;
};

// The node as NVML sees it: the driver and every GPU (MIG devices are listed in each GPU's identity).
struct NvmlNode {
  SystemInfo system;
  std::vector<NvmlGpu> gpus;
  std::string why_none;  // set when `gpus` is empty
};
NvmlNode enumerate_gpus(const std::shared_ptr<const NvmlLibrary>& lib);

// Critical Xid events of some GPUs, through one NVML event set. NVML delivers the events that occur
// after registration; earlier ones are in the kernel log only.
class XidWatcher {
 public:
  XidWatcher(std::shared_ptr<const NvmlLibrary> lib, const std::vector<nvml::nvmlDevice_t>& devices);
  ~XidWatcher();
  XidWatcher(const XidWatcher&) = delete;
  XidWatcher& operator=(const XidWatcher&) = delete;

  // Why some or all of the devices deliver no Xid events ("" when all do).
  const std::string& unsupported() const { return unsupported_; }
  bool watching(nvml::nvmlDevice_t device) const;
  // The events waiting now (never blocks): (device, Xid).
  std::vector<std::pair<nvml::nvmlDevice_t, std::uint64_t>> poll();

 private:
  std::shared_ptr<const NvmlLibrary> lib_;
  nvml::nvmlEventSet_t set_ = nullptr;
  std::vector<nvml::nvmlDevice_t> watched_;
  std::string unsupported_;
};

// PCI bus ids as NVML ("00000000:18:00.0") and CUDA ("0000:18:00.0") write them, in one form:
// domain, bus, device and function as numbers. nullopt for text that is not a bus id.
std::optional<std::uint64_t> pci_bus_key(const std::string& bus_id);
// "GPU-8f3c..." / "MIG-8f3c..." / "8f3c..." -> "8f3c..." in lower case: the form UUIDs are compared in.
std::string uuid_key(const std::string& uuid);

}  // namespace gpuscale::health
