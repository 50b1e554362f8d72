#include "health/device_match.h"

#include <fmt/format.h>

#include "health/nvml/nvml_gpu.h"

namespace gpuscale::health {

DeviceMatch match_device(const std::vector<GpuIdentity>& gpus, const nlohmann::json& details) {
  DeviceMatch m;
  const std::string uuid = details.is_object() ? details.value("uuid", std::string()) : std::string();
  const std::string bus = details.is_object() ? details.value("pci_bus_id", std::string()) : std::string();
  if (!uuid.empty()) {
    const auto key = uuid_key(uuid);
    for (std::size_t g = 0; g < gpus.size(); ++g) {
      if (!gpus[g].uuid.empty() && uuid_key(gpus[g].uuid) == key) {
        m.gpu = static_cast<int>(g);
        m.how = fmt::format("uuid {}", gpus[g].uuid);
        return m;
      }
      for (std::size_t i = 0; i < gpus[g].mig_instances.size(); ++i)
        if (!gpus[g].mig_instances[i].uuid.empty() && uuid_key(gpus[g].mig_instances[i].uuid) == key) {
          m.gpu = static_cast<int>(g);
          m.mig = static_cast<int>(i);
          m.how = fmt::format("MIG uuid {}", gpus[g].mig_instances[i].uuid);
          return m;
        }
    }
  }
  if (const auto want = pci_bus_key(bus)) {
    for (std::size_t g = 0; g < gpus.size(); ++g)
      if (gpus[g].pci_bus_id && pci_bus_key(*gpus[g].pci_bus_id) == want) {
        m.gpu = static_cast<int>(g);
        m.how = fmt::format("PCI bus id {}", bus);
        return m;
      }
  }
  if (uuid.empty() && bus.empty())
    m.why_none = "the device records no GPU uuid or PCI bus id";
  else
    m.why_none = fmt::format("no NVML GPU has uuid '{}' or PCI bus id '{}'", uuid, bus);
  return m;
}

nlohmann::json mig_peaks(const GpuIdentity& gpu, const MigInstance& mig) {
  if (!mig.sm_count || !gpu.sm_count || *gpu.sm_count == 0 || !mig.memory_mib || !gpu.memory_bytes ||
      *gpu.memory_bytes == 0)
    return {{"applies", "unknown"},
            {"reason", "NVML gave no SM count or memory size for the MIG device or its GPU"}};
  const double sm = static_cast<double>(*mig.sm_count) / *gpu.sm_count;
  const double mem = static_cast<double>(*mig.memory_mib) * 1048576.0 / static_cast<double>(*gpu.memory_bytes);
  return {{"applies", "slice share"},
          {"compute_fraction", sm},
          {"memory_bandwidth_fraction", std::min(1.0, mem)},
          {"note", "rows' expected_peak is the whole GPU's: a MIG device's compute peak is compute_fraction of it "
                   "(its SMs), its memory bandwidth memory_bandwidth_fraction (its memory slices)"}};
}

nlohmann::json mig_json(const GpuIdentity& gpu, const MigInstance& m) {
  return {{"uuid", m.uuid},
          {"parent_uuid", gpu.uuid},
          {"gpu_instance_id", json_or_null(m.gpu_instance_id)},
          {"compute_instance_id", json_or_null(m.compute_instance_id)},
          {"sm_count", json_or_null(m.sm_count)},
          {"memory_mib", json_or_null(m.memory_mib)},
          {"peaks", mig_peaks(gpu, m)}};
}

}  // namespace gpuscale::health
