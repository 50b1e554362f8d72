#include "analysis/health_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/escape.h"
#include "analysis/row_text.h"

namespace gpuscale {
namespace {

// Read leniently: a report must render whatever a valid (or hand-edited) file holds without throwing.
std::string text(const nlohmann::json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_string() ? term_text(o[key].get<std::string>()) : "";
}
long long integer(const nlohmann::json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_number_integer() ? o[key].get<long long>() : -1;
}
const nlohmann::json& member(const nlohmann::json& o, const char* key) {
  static const nlohmann::json none;
  return o.is_object() && o.contains(key) ? o[key] : none;
}
bool flag(const nlohmann::json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_boolean() && o[key].get<bool>();
}

}  // namespace

std::string format_health(const nlohmann::json& health, const std::vector<ResultRow>& rows) {
  if (!health.is_object()) return "";
  if (text(health, "telemetry") == "unavailable") return fmt::format("\nGPU telemetry: unavailable ({})\n", text(health, "reason"));
  const auto& c = member(health, "counts");
  std::string out = fmt::format("\nGPU health ({}; rules: {}): {} FAIL, {} WARN, {} PASS\n", text(health, "telemetry"),
                                text(health, "thresholds"), integer(c, "FAIL"), integer(c, "WARN"), integer(c, "PASS"));
  if (const auto why = text(health, "reason"); !why.empty()) out += fmt::format("  telemetry missing on some ranks: {}\n", why);
  const auto& gpus = member(health, "gpus");
  if (gpus.is_array())
    for (const auto& g : gpus)
      if (text(g, "verdict") != "PASS")
        out += fmt::format("  rank {} ({}) GPU {} {}: {}\n", integer(g, "rank"), text(g, "host"), integer(member(g, "gpu"), "index"),
                           text(member(g, "gpu"), "pci_bus_id"), text(g, "line"));
  std::vector<std::string> throttled;
  for (const auto& r : rows) {
    if (!flag(r.metrics, "throttled")) continue;
    std::vector<std::string> who;
    for (const auto& rv : r.ranks) {
      const auto& t = member(rv.metrics, "telemetry");
      if (!flag(t, "throttled")) continue;
      std::vector<std::string> reasons;
      if (const auto& rs = member(t, "throttle_reasons"); rs.is_array())
        for (const auto& x : rs)
          if (x.is_string()) reasons.push_back(term_text(x.get<std::string>()));
      who.push_back(fmt::format("rank {} ({})", rv.rank, fmt::join(reasons, ", ")));
    }
    throttled.push_back(fmt::format("  {} {} at {} GPU(s): {}\n", term_text(r.benchmark), term_text(params_label(r.params, false)),
                                    r.gpu_count, fmt::join(who, "; ")));
  }
  if (!throttled.empty()) {
    out += fmt::format("{} measurement(s) taken while a GPU was throttled (\"throttled\" in the JSON):\n", throttled.size());
    for (const auto& t : throttled) out += t;
  }
  if (const auto& inc = member(health, "consistency"); inc.is_array())
    for (const auto& i : inc) out += fmt::format("  {}: {}\n", text(i, "severity"), text(i, "message"));
  return out;
}

}  // namespace gpuscale
