#include "health/consistency.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpuscale::health {
namespace {

std::string value_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

const std::vector<std::string>& consistency_fields() {
  static const std::vector<std::string> fields = {"driver_version", "cuda_driver",      "cuda_runtime",
                                                  "nccl",           "device_model",     "power_limit_w",
                                                  "max_sm_clock_mhz", "max_memory_clock_mhz", "ecc_enabled"};
  return fields;
}

std::vector<Inconsistency> find_inconsistencies(const std::vector<UnitFacts>& units) {
  std::vector<Inconsistency> out;
  for (const auto& field : consistency_fields()) {
    // Distinct values in order of first appearance, with the units holding each.
    std::vector<Deviation> groups;
    for (const auto& u : units) {
      auto it = u.fields.find(field);
      if (it == u.fields.end() || it->second.is_null()) continue;
      auto g = std::find_if(groups.begin(), groups.end(), [&](const Deviation& d) { return d.value == it->second; });
      if (g == groups.end()) {
        groups.push_back({it->second, {}, {}});
        g = groups.end() - 1;
      }
      g->units.push_back(u.unit);
      if (std::find(g->hosts.begin(), g->hosts.end(), u.host) == g->hosts.end()) g->hosts.push_back(u.host);
    }
    if (groups.size() < 2) continue;
    // stable: among equally common values the first seen is the reference
    std::stable_sort(groups.begin(), groups.end(),
                     [](const Deviation& a, const Deviation& b) { return a.units.size() > b.units.size(); });
    Inconsistency inc{field, groups.front().value, groups.front().units.size(), {}};
    inc.others.assign(groups.begin() + 1, groups.end());
    out.push_back(std::move(inc));
  }
  return out;
}

std::string describe(const Inconsistency& i, const std::string& unit_name) {
  std::vector<std::string> parts;
  for (const auto& d : i.others)
    parts.push_back(fmt::format("{} on {} ({}{} {})", value_text(d.value), fmt::join(d.hosts, ", "), unit_name,
                                d.units.size() > 1 ? "s" : "", fmt::join(d.units, ", ")));
  return fmt::format("{} differs: {} on {} {}{}; {}", i.field, value_text(i.majority), i.majority_count, unit_name,
                     i.majority_count > 1 ? "s" : "", fmt::join(parts, "; "));
}

nlohmann::json to_json(const Inconsistency& i, const std::string& unit_name) {
  nlohmann::json others = nlohmann::json::array();
  for (const auto& d : i.others) others.push_back({{"value", d.value}, {"hosts", d.hosts}, {unit_name + "s", d.units}});
  return {{"field", i.field},
          {"majority", i.majority},
          {"majority_count", i.majority_count},
          {"differing", others},
          {"message", describe(i, unit_name)}};
}

}  // namespace gpuscale::health
