#include "health/gpu_state.h"

#include "health/clock_events.h"

namespace gpuscale::health {
nlohmann::json to_json(const SystemInfo& s) {
  return {{"driver_version", json_or_null(s.driver_version)},
          {"nvml_version", json_or_null(s.nvml_version)},
          {"cuda_driver_version", json_or_null(s.cuda_driver_version)},
          {"unsupported", s.unsupported},
          {"errors", s.errors}};
}

nlohmann::json to_json(const GpuIdentity& g) {
  nlohmann::json mig = nlohmann::json::array();
  for (const auto& m : g.mig_instances)
    mig.push_back({{"uuid", m.uuid},
                   {"gpu_instance_id", json_or_null(m.gpu_instance_id)},
                   {"compute_instance_id", json_or_null(m.compute_instance_id)},
                   {"sm_count", json_or_null(m.sm_count)},
                   {"gpu_instance_slices", json_or_null(m.gpu_instance_slices)},
                   {"compute_instance_slices", json_or_null(m.compute_instance_slices)},
                   {"memory_mib", json_or_null(m.memory_mib)}});
  return {{"index", g.index},
          {"name", g.name},
          {"uuid", g.uuid},
          {"serial", json_or_null(g.serial)},
          {"pci_bus_id", json_or_null(g.pci_bus_id)},
          {"pci_device_id", json_or_null(g.pci_device_id)},
          {"compute_capability", json_or_null(g.compute_capability)},
          {"memory_bytes", json_or_null(g.memory_bytes)},
          {"sm_count", json_or_null(g.sm_count)},
          {"max_sm_clock_mhz", json_or_null(g.max_sm_clock_mhz)},
          {"max_memory_clock_mhz", json_or_null(g.max_memory_clock_mhz)},
          {"power_limit_w", json_or_null(g.power_limit_w)},
          {"default_power_limit_w", json_or_null(g.default_power_limit_w)},
          {"persistence_mode", json_or_null(g.persistence_mode)},
          {"compute_mode", json_or_null(g.compute_mode)},
          {"virtualization_mode", json_or_null(g.virtualization_mode)},
          {"ecc_enabled", json_or_null(g.ecc_enabled)},
          {"ecc_pending", json_or_null(g.ecc_pending)},
          {"pcie_max_gen", json_or_null(g.pcie_max_gen)},
          {"pcie_max_width", json_or_null(g.pcie_max_width)},
          {"mig_enabled", json_or_null(g.mig_enabled)},
          {"mig_pending", json_or_null(g.mig_pending)},
          {"mig_instances", mig},
          {"nvlink_links", json_or_null(g.nvlink_links)},
          {"unsupported", g.unsupported},
          {"errors", g.errors}};
}

nlohmann::json to_json(const GpuCounters& c) {
  nlohmann::json links = nlohmann::json::array();
  for (const auto& up : c.nvlink_up) links.push_back(json_or_null(up));
  nlohmann::json link_errors = nlohmann::json::array();
  for (const auto& counters : c.nvlink_errors) {
    nlohmann::json one = nlohmann::json::object();
    for (std::size_t i = 0; i < counters.size(); ++i) one[kNvlinkCounterNames[i]] = json_or_null(counters[i]);
    link_errors.push_back(one);
  }
  nlohmann::json procs = nullptr;
  if (c.processes) {
    procs = nlohmann::json::array();
    for (const auto& p : *c.processes) procs.push_back({{"pid", p.pid}, {"used_bytes", p.used_bytes}});
  }
  return {{"ecc_corrected_volatile", json_or_null(c.ecc_corrected_volatile)},
          {"ecc_uncorrected_volatile", json_or_null(c.ecc_uncorrected_volatile)},
          {"ecc_corrected_aggregate", json_or_null(c.ecc_corrected_aggregate)},
          {"ecc_uncorrected_aggregate", json_or_null(c.ecc_uncorrected_aggregate)},
          {"retired_pages_sbe", json_or_null(c.retired_pages_sbe)},
          {"retired_pages_dbe", json_or_null(c.retired_pages_dbe)},
          {"retired_pages_pending", json_or_null(c.retired_pages_pending)},
          {"remapped_rows_correctable", json_or_null(c.remapped_rows_correctable)},
          {"remapped_rows_uncorrectable", json_or_null(c.remapped_rows_uncorrectable)},
          {"remap_pending", json_or_null(c.remap_pending)},
          {"remap_failed", json_or_null(c.remap_failed)},
          {"pcie_replays", json_or_null(c.pcie_replays)},
          {"energy_mj", json_or_null(c.energy_mj)},
          {"nvlink_up", links},
          {"nvlink_errors", link_errors},
          {"processes", procs},
          {"gpu_lost", c.gpu_lost}};
}

nlohmann::json to_json(const GpuSample& s) {
  return {{"t", s.t},
          {"sm_clock_mhz", json_or_null(s.sm_clock_mhz)},
          {"memory_clock_mhz", json_or_null(s.memory_clock_mhz)},
          {"temperature_c", json_or_null(s.temperature_c)},
          {"power_w", json_or_null(s.power_w)},
          {"gpu_util_percent", json_or_null(s.gpu_util_percent)},
          {"memory_util_percent", json_or_null(s.memory_util_percent)},
          {"clock_events", s.clock_events ? nlohmann::json(clock_event_names(*s.clock_events)) : nlohmann::json(nullptr)},
          {"pcie_gen", json_or_null(s.pcie_gen)},
          {"pcie_width", json_or_null(s.pcie_width)}};
}

}  // namespace gpuscale::health
