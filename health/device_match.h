#pragma once
// Which NVML GPU (or MIG device) is a rank's device: by UUID first (the CUDA backend records the
// device's "uuid" in DeviceInfo.details; a MIG device's UUID matches one of its GPU's instances),
// then by PCI bus id ("pci_bus_id"). Pure, unit-tested without NVML.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "health/gpu_state.h"

namespace gpuscale::health {

struct DeviceMatch {
  int gpu = -1;          // index into the list; -1: no match (why_none says why)
  int mig = -1;          // index into that GPU's mig_instances, or -1 for the whole GPU
  std::string how;       // "uuid GPU-...", "MIG uuid MIG-...", "PCI bus id 0000:18:00.0"
  std::string why_none;
};

DeviceMatch match_device(const std::vector<GpuIdentity>& gpus, const nlohmann::json& device_details);

// Which peaks apply to a MIG device: its share of the GPU's SMs and memory (each memory slice carries
// its share of the memory controllers), or "unknown" with the reason when NVML did not say.
nlohmann::json mig_peaks(const GpuIdentity& gpu, const MigInstance& mig);
nlohmann::json mig_json(const GpuIdentity& gpu, const MigInstance& mig);

}  // namespace gpuscale::health
