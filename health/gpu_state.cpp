#include "health/gpu_state.h"

#include "health/clock_events.h"

namespace gpuscale::health {
namespace {

template <typename T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json to_json(const SystemInfo& s) {
  return {{"driver_version", opt(s.driver_version)},
          {"nvml_version", opt(s.nvml_version)},
          {"cuda_driver_version", opt(s.cuda_driver_version)},
          {"unsupported", s.unsupported},
          {"errors", s.errors}};
}

nlohmann::json to_json(const GpuIdentity& g) {
  nlohmann::json mig = nlohmann::json::array();
  for (const auto& m : g.mig_instances)
    mig.push_back({{"uuid", m.uuid},
                   {"gpu_instance_id", opt(m.gpu_instance_id)},
                   {"compute_instance_id", opt(m.compute_instance_id)},
                   {"sm_count", opt(m.sm_count)},
                   {"gpu_instance_slices", opt(m.gpu_instance_slices)},
                   {"compute_instance_slices", opt(m.compute_instance_slices)},
                   {"memory_mib", opt(m.memory_mib)}});
  return {{"index", g.index},
          {"name", g.name},
          {"uuid", g.uuid},
          {"serial", opt(g.serial)},
          {"pci_bus_id", opt(g.pci_bus_id)},
          {"pci_device_id", opt(g.pci_device_id)},
          {"compute_capability", opt(g.compute_capability)},
          {"memory_bytes", opt(g.memory_bytes)},
          {"sm_count", opt(g.sm_count)},
          {"max_sm_clock_mhz", opt(g.max_sm_clock_mhz)},
          {"max_memory_clock_mhz", opt(g.max_memory_clock_mhz)},
          {"power_limit_w", opt(g.power_limit_w)},
          {"default_power_limit_w", opt(g.default_power_limit_w)},
          {"persistence_mode", opt(g.persistence_mode)},
          {"compute_mode", opt(g.compute_mode)},
          {"ecc_enabled", opt(g.ecc_enabled)},
          {"ecc_pending", opt(g.ecc_pending)},
          {"pcie_max_gen", opt(g.pcie_max_gen)},
          {"pcie_max_width", opt(g.pcie_max_width)},
          {"mig_enabled", opt(g.mig_enabled)},
          {"mig_pending", opt(g.mig_pending)},
          {"mig_instances", mig},
          {"nvlink_links", opt(g.nvlink_links)},
          {"unsupported", g.unsupported},
          {"errors", g.errors}};
}

nlohmann::json to_json(const GpuCounters& c) {
  nlohmann::json links = nlohmann::json::array();
  for (const auto& up : c.nvlink_up) links.push_back(opt(up));
  nlohmann::json procs = nullptr;
  if (c.processes) {
    procs = nlohmann::json::array();
    for (const auto& p : *c.processes) procs.push_back({{"pid", p.pid}, {"used_bytes", p.used_bytes}});
  }
  return {{"ecc_corrected_volatile", opt(c.ecc_corrected_volatile)},
          {"ecc_uncorrected_volatile", opt(c.ecc_uncorrected_volatile)},
          {"ecc_corrected_aggregate", opt(c.ecc_corrected_aggregate)},
          {"ecc_uncorrected_aggregate", opt(c.ecc_uncorrected_aggregate)},
          {"retired_pages_sbe", opt(c.retired_pages_sbe)},
          {"retired_pages_dbe", opt(c.retired_pages_dbe)},
          {"retired_pages_pending", opt(c.retired_pages_pending)},
          {"remapped_rows_correctable", opt(c.remapped_rows_correctable)},
          {"remapped_rows_uncorrectable", opt(c.remapped_rows_uncorrectable)},
          {"remap_pending", opt(c.remap_pending)},
          {"remap_failed", opt(c.remap_failed)},
          {"pcie_replays", opt(c.pcie_replays)},
          {"nvlink_up", links},
          {"nvlink_errors", c.nvlink_errors},
          {"processes", procs},
          {"gpu_lost", c.gpu_lost}};
}

nlohmann::json to_json(const GpuSample& s) {
  return {{"t", s.t},
          {"sm_clock_mhz", opt(s.sm_clock_mhz)},
          {"memory_clock_mhz", opt(s.memory_clock_mhz)},
          {"temperature_c", opt(s.temperature_c)},
          {"power_w", opt(s.power_w)},
          {"gpu_util_percent", opt(s.gpu_util_percent)},
          {"memory_util_percent", opt(s.memory_util_percent)},
          {"clock_events", s.clock_events ? nlohmann::json(clock_event_names(*s.clock_events)) : nlohmann::json(nullptr)},
          {"pcie_gen", opt(s.pcie_gen)},
          {"pcie_width", opt(s.pcie_width)}};
}

}  // namespace gpuscale::health
