#include "health/observation.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "health/clock_events.h"

namespace gpuscale::health {
namespace {

template <typename T>
void keep_min(std::optional<T>& slot, const std::optional<T>& v) {
  if (v && (!slot || *v < *slot)) slot = v;
}
template <typename T>
void keep_max(std::optional<T>& slot, const std::optional<T>& v) {
  if (v && (!slot || *v > *slot)) slot = v;
}

}  // namespace

void Observation::add(const GpuSample& s) {
  ++samples_;
  if (s.clock_events) clock_events_ |= *s.clock_events;
  gpu_lost_ |= s.gpu_lost;
  keep_min(sm_min_, s.sm_clock_mhz);
  keep_max(sm_max_, s.sm_clock_mhz);
  keep_max(temp_max_, s.temperature_c);
  keep_max(power_max_, s.power_w);
  if (s.power_w) {
    power_sum_ += *s.power_w;
    ++power_n_;
  }
  keep_max(memory_max_, s.memory_used_bytes);
  keep_max(util_max_, s.gpu_util_percent);
  keep_max(width_max_, s.pcie_width);
  if (s.gpu_util_percent && *s.gpu_util_percent >= load_percent_) {
    ++loaded_;
    keep_max(gen_max_loaded_, s.pcie_gen);
    if (s.sm_clock_mhz) ++loaded_clocks_[*s.sm_clock_mhz];
  }
}

void Observation::add(const GpuCounters& c) {
  if (!first_) first_ = c;
  last_ = c;
  gpu_lost_ |= c.gpu_lost;
}

void Observation::merge(const Observation& later) {
  samples_ += later.samples_;
  loaded_ += later.loaded_;
  clock_events_ |= later.clock_events_;
  if (!first_) first_ = later.first_;
  if (later.last_) last_ = later.last_;
  xids_.insert(xids_.end(), later.xids_.begin(), later.xids_.end());
  gpu_lost_ |= later.gpu_lost_;
  keep_min(sm_min_, later.sm_min_);
  keep_max(sm_max_, later.sm_max_);
  keep_max(temp_max_, later.temp_max_);
  keep_max(power_max_, later.power_max_);
  power_sum_ += later.power_sum_;
  power_n_ += later.power_n_;
  keep_max(memory_max_, later.memory_max_);
  keep_max(util_max_, later.util_max_);
  keep_max(width_max_, later.width_max_);
  keep_max(gen_max_loaded_, later.gen_max_loaded_);
  for (const auto& [mhz, n] : later.loaded_clocks_) loaded_clocks_[mhz] += n;
}

std::optional<unsigned> Observation::sm_clock_median_under_load() const {
  std::size_t total = 0;
  for (const auto& [mhz, n] : loaded_clocks_) total += n;
  if (total == 0) return std::nullopt;
  std::size_t seen = 0;
  for (const auto& [mhz, n] : loaded_clocks_) {
    seen += n;
    if (2 * seen >= total) return mhz;  // the lower median
  }
  return loaded_clocks_.rbegin()->first;
}

std::optional<double> Observation::power_mean() const {
  if (power_n_ == 0) return std::nullopt;
  return power_sum_ / static_cast<double>(power_n_);
}

EnergyWindow gpu_energy(const Observation& o) {
  EnergyWindow w{"gpu", "NVML total energy", {}, 0};
  const EnergyCounter nvml{1e-3, std::nullopt, "NVML's energy counter"};
  if (!o.first() || !o.last()) {
    w.energy.invalid = "the GPU's counters were not read at both ends of the window";
    return w;
  }
  const auto& a = *o.first();
  const auto& b = *o.last();
  w.seconds = b.t - a.t;
  if (!a.energy_mj || !b.energy_mj) {
    const auto& c = a.energy_mj ? b : a;
    const auto why = c.unsupported.count("energy_mj") ? c.unsupported.at("energy_mj")
                     : c.errors.count("energy_mj")    ? c.errors.at("energy_mj")
                                                      : std::string("not read");
    w.energy.invalid = "NVML's energy counter: " + why;
    return w;
  }
  w.energy = energy_between(nvml, *a.energy_mj, *b.energy_mj);
  return w;
}

std::vector<std::string> throttle_reasons(std::uint64_t bits, const Thresholds& t) {
  std::vector<std::string> out;
  for (const auto& name : clock_event_names(bits))
    if (t.clock_event(name) != Severity::pass) out.push_back(name);
  return out;
}

nlohmann::json point_summary(const Observation& o, const Thresholds& t) {
  const auto throttles = throttle_reasons(o.clock_events(), t);
  nlohmann::json j = {{"samples", o.samples()},
                      {"sm_clock_mhz", {{"min", json_or_null(o.sm_clock_min())}, {"max", json_or_null(o.sm_clock_max())}}},
                      {"temperature_max_c", json_or_null(o.temperature_max())},
                      {"power_max_w", json_or_null(o.power_max())},
                      {"power_samples", o.power_samples()},
                      {"power_mean_w", json_or_null(o.power_mean())},
                      {"memory_used_max_bytes", json_or_null(o.memory_used_max())},
                      {"clock_events", clock_event_names(o.clock_events())},
                      {"throttled", !throttles.empty()}};
  if (!throttles.empty()) j["throttle_reasons"] = throttles;
  if (!o.xids().empty()) {
    std::vector<std::uint64_t> codes;
    for (const auto& x : o.xids()) codes.push_back(x.xid);
    j["xid"] = codes;
  }
  if (o.first() && o.last()) {
    if (auto d = counter_increase(o.first()->ecc_uncorrected_volatile, o.last()->ecc_uncorrected_volatile); d && *d > 0)
      j["ecc_uncorrected_increase"] = *d;
    if (auto d = counter_increase(o.first()->ecc_corrected_volatile, o.last()->ecc_corrected_volatile); d && *d > 0)
      j["ecc_corrected_increase"] = *d;
  }
  if (o.gpu_lost()) j["gpu_lost"] = true;
  return j;
}

}  // namespace gpuscale::health
