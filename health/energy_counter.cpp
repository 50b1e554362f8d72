#include "health/energy_counter.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpuscale::health {

Energy energy_between(const EnergyCounter& counter, std::uint64_t before, std::uint64_t after) {
  if (counter.wraps_at && (before > *counter.wraps_at || after > *counter.wraps_at))
    return {std::nullopt, fmt::format("{} read {} beyond its range of {}", counter.name, std::max(before, after),
                                      *counter.wraps_at)};
  if (after >= before) return {static_cast<double>(after - before) * counter.joules_per_unit, ""};
  // One wrap of a counter that wraps (RAPL): what was left to the top, then from zero.
  if (counter.wraps_at)
    return {static_cast<double>(*counter.wraps_at - before + after) * counter.joules_per_unit, ""};
  return {std::nullopt, fmt::format("{} went backwards (from {} to {}): reset, as by a driver reload, while this was "
                                    "measured",
                                    counter.name, before, after)};
}

void SpanEnergy::add(const EnergyCounter& counter, std::optional<std::uint64_t> before,
                     std::optional<std::uint64_t> after, double span_seconds, const std::string& why_unread) {
  seconds += span_seconds;
  if (!before || !after)
    parts.push_back({std::nullopt, why_unread.empty() ? counter.name + " was not read at both ends of a timed span" : why_unread});
  else
    parts.push_back(energy_between(counter, *before, *after));
}

std::optional<double> average_power_w(const Energy& e, double seconds) {
  if (!e.joules || !(seconds > 0)) return std::nullopt;
  return *e.joules / seconds;
}

Energy sum_energy(const std::vector<Energy>& parts) {
  if (parts.empty()) return {std::nullopt, "no energy counter was read"};
  double total = 0;
  for (const auto& p : parts) {
    if (!p.joules) return p;
    total += *p.joules;
  }
  return {total, ""};
}

nlohmann::json to_json(const EnergyWindow& w) {
  const auto power = average_power_w(w.energy, w.seconds);
  nlohmann::json j = {{"scope", w.scope},
                      {"source", w.source},
                      {"seconds", w.seconds},
                      {"energy_j", w.energy.joules ? nlohmann::json(*w.energy.joules) : nlohmann::json(nullptr)},
                      {"avg_power_w", power ? nlohmann::json(*power) : nlohmann::json(nullptr)}};
  if (!w.energy.joules) j["invalid"] = w.energy.invalid;
  return j;
}

}  // namespace gpuscale::health
