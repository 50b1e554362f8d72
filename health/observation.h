#pragma once
// What one GPU did over a window (a benchmark point, a whole run, a health check): the counters at its
// start and end, and the extremes of the samples in between. Pure data, filled by the telemetry
// session and judged by health/verdict.h; unit-tested without NVML.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "health/energy_counter.h"
#include "health/gpu_state.h"
#include "health/thresholds.h"

namespace gpuscale::health {

class Observation {
 public:
  // A sample is "under load" when the GPU's utilisation is at least `load_percent`.
  explicit Observation(double load_percent) : load_percent_(load_percent) {}
  Observation() : Observation(90) {}

  void add(const GpuSample& s);
  void add(const GpuCounters& c);  // the first call sets first(), every call sets last()
  void add(const XidEvent& x) { xids_.push_back(x); }
  void merge(const Observation& later);  // `later` follows this window

  std::size_t samples() const { return samples_; }
  std::uint64_t clock_events() const { return clock_events_; }  // every reason bit seen
  const std::optional<GpuCounters>& first() const { return first_; }
  const std::optional<GpuCounters>& last() const { return last_; }
  const std::vector<XidEvent>& xids() const { return xids_; }
  bool gpu_lost() const { return gpu_lost_; }
  std::optional<unsigned> sm_clock_min() const { return sm_min_; }
  std::optional<unsigned> sm_clock_max() const { return sm_max_; }
  std::optional<unsigned> temperature_max() const { return temp_max_; }
  std::optional<double> power_max() const { return power_max_; }
  std::size_t power_samples() const { return power_n_; }
  std::optional<double> power_mean() const;  // mean of the sampled power (nullopt without a sample)
  std::optional<std::uint64_t> memory_used_max() const { return memory_max_; }  // peak device memory in use
  std::optional<unsigned> utilization_max() const { return util_max_; }
  std::optional<unsigned> pcie_width_max() const { return width_max_; }  // widest link seen
  std::optional<unsigned> pcie_gen_max_under_load() const { return gen_max_loaded_; }
  std::size_t samples_under_load() const { return loaded_; }
  // Median SM clock of the samples under load (nullopt when none).
  std::optional<unsigned> sm_clock_median_under_load() const;

 private:
  double load_percent_;
  std::size_t samples_ = 0, loaded_ = 0;
  std::uint64_t clock_events_ = 0;
  std::optional<GpuCounters> first_, last_;
  std::vector<XidEvent> xids_;
  bool gpu_lost_ = false;
  std::optional<unsigned> sm_min_, sm_max_, temp_max_, util_max_, width_max_, gen_max_loaded_;
  std::optional<double> power_max_;
  double power_sum_ = 0;
  std::size_t power_n_ = 0;
  std::optional<std::uint64_t> memory_max_;
  std::map<unsigned, std::size_t> loaded_clocks_;  // SM MHz -> samples under load (bounded by distinct clocks)
};

// The GPU's energy over the window, from NVML's total energy counter at its first and last counters
// (unknown with the reason when the counter is missing, unsupported or was reset in between).
EnergyWindow gpu_energy(const Observation& o);

// Clock event reasons that the thresholds judge (warn or fail) and that `bits` contains.
std::vector<std::string> throttle_reasons(std::uint64_t bits, const Thresholds& t);

// The compact summary stored per rank in each result row: samples, SM clock min/max, maximum
// temperature and power, the power samples' count and mean, clock events seen, `throttled`, and any Xid or ECC increase in the window.
nlohmann::json point_summary(const Observation& o, const Thresholds& t);

}  // namespace gpuscale::health
