#pragma once
// A GPU seen through virtualisation (issue 28: virtualised GPUs named), from what NVML tells a guest:
// its virtualisation mode (nvmlDeviceGetVirtualizationMode: none, pass-through, vGPU guest, vGPU host)
// and, in a vGPU guest, its name, which is the vGPU type ("NVIDIA H100XM-1-10C": a MIG-backed profile of
// 1 of the GPU's 7 compute slices and 10 GB; "NVIDIA H100XM-40C": a time-sliced profile of 40 GB).
// A pass-through GPU is the whole GPU: measured as on bare metal. A MIG-backed vGPU owns its slices,
// but slices are no equal shares (an H100's 1, 2, 3, 4 and 7-slice instances have 16, 32, 60, 64 and
// 132 SMs; memory is cut in eighths), and a vGPU's name matches no whole GPU of the peaks table, so
// there is no whole-GPU peak to scale: its peak is what a peaks file gives for the vGPU type itself, or
// unknown, and the row says the instance's own SMs and memory (NVML's) instead of a share. A
// time-sliced vGPU shares the whole GPU in turns with the other VMs on it, a share the guest cannot
// know: its percent of peak is withheld, with the reason.
// MIG without vGPU is handled as today (health/device_match.h, the MIG device's own peaks).
// Pure: tests/unit/health/test_virtual_gpu.cpp.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "peaks/peaks.h"

namespace gpuscale::health {

// NVML's nvmlGpuVirtualizationMode_t as the result file names it.
const char* virtualization_mode_name(int mode);  // "none", "passthrough", "vgpu_guest", "host_vgpu", "host_vsga"

struct VirtualGpu {
  std::string mode;            // as virtualization_mode_name; "" when NVML did not say
  std::string profile;         // the vGPU type read from the name ("H100XM-1-10C"); "" when not a vGPU guest
  std::string sharing;         // "mig" (its own slices) or "time_sliced"; "" when not a vGPU or unknown
  std::optional<int> slices;    // a MIG-backed profile's compute slices, as its name says (not a share)
  std::optional<int> sm_count;  // the instance's own (NVML), where the rank's telemetry has it
  std::optional<std::uint64_t> memory_bytes;
};
VirtualGpu virtual_gpu(const std::string& mode, const std::string& name);
// The same from a rank's entry in the result file's `ranks` (its telemetry's gpu identity); mode ""
// where the rank has no telemetry.
VirtualGpu virtual_gpu_of(const nlohmann::json& rank_identity);

// What a row's per-GPU peak becomes when some of its ranks ran on vGPUs: kept (every vGPU of the row
// MIG-backed of one profile: a peak found for it is the vGPU type's own; `instance` names its SMs and
// memory), or withheld (`withheld`, with `why`); `flag` is the row flag's reason ("" for rows of whole
// GPUs).
struct PeakShare {
  bool withheld = false;
  std::string why, flag;
  std::string instance;  // "16 SMs, 10 GiB" where known ("" otherwise)
};
PeakShare vgpu_peak_share(const std::vector<VirtualGpu>& ranks);
// A per-device expected peak for such a row: withheld with the reason, or, MIG-backed, kept as found
// and, when none was found, unknown with the reason that no share of a whole GPU's peak is taken;
// unchanged for whole GPUs.
ExpectedPeak shared_peak(ExpectedPeak peak, const PeakShare& share);

}  // namespace gpuscale::health
