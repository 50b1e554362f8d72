#pragma once
// What gpuscale knows about a GPU from NVML, as plain data (no NVML types): its identity (read once),
// fast samples (clocks, temperature, power, utilisation, clock event reasons, PCIe link: read by the
// background sampler) and counters (ECC, retired pages, row remapping, PCIe replays, NVLink, processes:
// read before and after each benchmark point). A field NVML cannot give is empty, with the reason in
// `unsupported` (missing symbol, NOT_SUPPORTED, NO_PERMISSION) or `errors` (any other NVML error).
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuscale::health {

using Reasons = std::map<std::string, std::string>;  // field -> why it has no value

// The driver as a whole.
struct SystemInfo {
  std::optional<std::string> driver_version;  // "550.54.15"
  std::optional<std::string> nvml_version;
  std::optional<int> cuda_driver_version;     // highest CUDA the driver supports, 12040 = 12.4
  Reasons unsupported, errors;
};

struct MigInstance {
  std::string uuid;  // "MIG-..."
  std::optional<unsigned> gpu_instance_id, compute_instance_id;
  std::optional<unsigned> sm_count, gpu_instance_slices, compute_instance_slices;
  std::optional<std::uint64_t> memory_mib;
};

struct GpuIdentity {
  int index = 0;            // NVML index on the node
  std::string name, uuid;   // uuid "GPU-..." (or "MIG-..." for a MIG device)
  std::optional<std::string> serial, pci_bus_id, pci_device_id, compute_capability;  // "00000000:18:00.0", "0x2330", "9.0"
  std::optional<std::uint64_t> memory_bytes;
  std::optional<unsigned> sm_count, max_sm_clock_mhz, max_memory_clock_mhz;
  std::optional<double> power_limit_w, default_power_limit_w;
  std::optional<bool> persistence_mode, ecc_enabled, ecc_pending;
  std::optional<std::string> compute_mode;  // "default", "exclusive_process", "prohibited", "exclusive_thread"
  std::optional<std::string> virtualization_mode;  // "none", "passthrough", "vgpu_guest", ... (health/virtual_gpu.h)
  std::optional<unsigned> pcie_max_gen, pcie_max_width;
  std::optional<bool> mig_enabled, mig_pending;
  std::vector<MigInstance> mig_instances;
  std::optional<unsigned> nvlink_links;     // links that report a state
  Reasons unsupported, errors;
};

// One reading by the sampler.
struct GpuSample {
  double t = 0;  // seconds since the telemetry session started
  std::optional<unsigned> sm_clock_mhz, memory_clock_mhz, temperature_c, gpu_util_percent, memory_util_percent;
  std::optional<double> power_w;
  std::optional<std::uint64_t> memory_used_bytes;  // device memory in use (every process's, NVML's "used")
  std::optional<std::uint64_t> clock_events;  // NVML clock event (throttle) reason bits
  std::optional<unsigned> pcie_gen, pcie_width;
  bool gpu_lost = false;
};

struct GpuProcess {
  unsigned pid = 0;
  std::uint64_t used_bytes = 0;
};

// NVML's NVLink error counters (nvmlNvLinkErrorCounter_t 0..3: DL_REPLAY, DL_RECOVERY, DL_CRC_FLIT,
// DL_CRC_DATA), as the result file names them.
inline constexpr std::array<const char*, 4> kNvlinkCounterNames = {"replay", "recovery", "crc_flit", "crc_data"};
using NvlinkCounters = std::array<std::optional<std::uint64_t>, kNvlinkCounterNames.size()>;

// Counters read before and after each point.
struct GpuCounters {
  std::optional<std::uint64_t> ecc_corrected_volatile, ecc_uncorrected_volatile;
  std::optional<std::uint64_t> ecc_corrected_aggregate, ecc_uncorrected_aggregate;
  std::optional<unsigned> retired_pages_sbe, retired_pages_dbe;
  std::optional<bool> retired_pages_pending;
  std::optional<unsigned> remapped_rows_correctable, remapped_rows_uncorrectable;
  std::optional<bool> remap_pending, remap_failed;
  std::optional<unsigned> pcie_replays;
  // NVML's total energy since the driver loaded (mJ; Volta and later), and when the counters were read
  // (seconds since the telemetry session started): a window's energy is the difference (energy_counter.h).
  std::optional<std::uint64_t> energy_mj;
  double t = 0;
  std::vector<std::optional<bool>> nvlink_up;        // per link; empty when NVML reports no link
  // Per link, NVML's error counters in kNvlinkCounterNames' order. A counter NVML does not support (many
  // are not on Hopper and newer) or could not read is null and named in `unsupported` or `errors`
  // ("nvlink_errors.crc_data"): never read as zero errors, and left out of the verdict.
  std::vector<NvlinkCounters> nvlink_errors;
  std::optional<std::vector<GpuProcess>> processes;  // compute processes on the GPU
  bool gpu_lost = false;
  Reasons unsupported, errors;
};

struct GpuSnapshot {
  GpuSample sample;
  GpuCounters counters;
};

struct XidEvent {
  double t = 0;
  std::uint64_t xid = 0;
};

// A reading as JSON: its value, or null when there is none.
template <typename T>
nlohmann::json json_or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// How much a counter rose between two readings (nullopt when either is missing).
template <typename T>
std::optional<std::int64_t> counter_increase(const std::optional<T>& before, const std::optional<T>& after) {
  if (!before || !after) return std::nullopt;
  return static_cast<std::int64_t>(*after) - static_cast<std::int64_t>(*before);
}

nlohmann::json to_json(const SystemInfo& s);
nlohmann::json to_json(const GpuIdentity& g);
nlohmann::json to_json(const GpuCounters& c);
nlohmann::json to_json(const GpuSample& s);

}  // namespace gpuscale::health
