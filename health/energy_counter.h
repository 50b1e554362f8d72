#pragma once
// Energy from a cumulative counter read before and after a piece of work (issue 27's energy per result):
// NVML's total energy (mJ since the driver loaded, nvmlDeviceGetTotalEnergyConsumption) on GPUs, RAPL's
// energy_uj through powercap (µJ, wrapping at max_energy_range_uj) on CPUs. A counter that went
// backwards without a known wrap (a driver reload resets NVML's) makes the energy unknown, with the
// reason: never negative, never a guess. Pure: tests/unit/health/test_energy_counter.cpp.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gpuscale::health {

struct EnergyCounter {
  double joules_per_unit = 1e-3;       // NVML: mJ; RAPL: 1e-6 (µJ)
  std::optional<std::uint64_t> wraps_at;  // RAPL's max_energy_range_uj; NVML's does not wrap
  std::string name = "the energy counter";  // for the reason: "NVML's energy counter", "RAPL package-0"
};

struct Energy {
  std::optional<double> joules;  // unknown when the counter cannot say
  std::string invalid;           // why it is unknown ("" when known)
};

// The energy between two readings of `counter`. A reading at or above the wrap, or a backwards step
// without a wrap, is unknown with the reason.
Energy energy_between(const EnergyCounter& counter, std::uint64_t before, std::uint64_t after);

// Average power over `seconds` (> 0) of an energy; unknown when the energy is.
std::optional<double> average_power_w(const Energy& e, double seconds);

// The sum of several counters' energies over one window (RAPL's packages): unknown, with the first
// reason, when any is.
Energy sum_energy(const std::vector<Energy>& parts);

// One counter's energy over the timed spans of a point (core/timed_span.h): each span's energy between
// its two readings, summed, the untimed work between spans left out; unknown, with the first reason,
// when a reading is missing (`why_unread`) or a span's energy is unknown.
struct SpanEnergy {
  std::vector<Energy> parts;
  double seconds = 0;  // the spans' time, summed
  void add(const EnergyCounter& counter, std::optional<std::uint64_t> before, std::optional<std::uint64_t> after,
           double span_seconds, const std::string& why_unread);
  Energy total() const { return sum_energy(parts); }
};

// One source's energy over one window (a benchmark point, a whole run), as a rank's metrics["energy"]
// and the run's health.energy say it.
struct EnergyWindow {
  std::string scope;   // "gpu": this rank's GPU (NVML); "node": the node's CPU packages (RAPL)
  std::string source;  // "NVML total energy", "RAPL package-0+package-1"
  Energy energy;
  double seconds = 0;  // between the two readings
};
// {"scope", "source", "seconds", "energy_j", "avg_power_w", "invalid" (only when unknown)}
nlohmann::json to_json(const EnergyWindow& w);

}  // namespace gpuscale::health
