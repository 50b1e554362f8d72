#include "analysis/health_text.h"

#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "text/escape.h"
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

std::optional<double> number(const nlohmann::json& o, const char* key) {
  if (o.is_object() && o.contains(key) && o[key].is_number()) return o[key].get<double>();
  return std::nullopt;
}

// "12.3 kJ" / "850 J"
std::string joules(double j) { return j >= 1e4 ? fmt::format("{:.1f} kJ", j / 1e3) : fmt::format("{:.0f} J", j); }

// One line for the run's energy (health.energy), and one per host up to a handful.
std::string format_energy(const nlohmann::json& e) {
  if (!e.is_object()) return "";
  const auto scope = text(e, "scope");
  const std::string what = scope == "gpu" ? "GPUs, NVML" : scope == "node" ? "nodes' CPU packages, RAPL" : "no counter";
  const auto j = number(e, "energy_j");
  const auto w = number(e, "avg_power_w");
  if (!j || !w) return fmt::format("Energy over the run ({}): unknown: {}\n", what, text(e, "invalid"));
  std::string out = fmt::format("Energy over the run ({}): {}, {:.0f} W on average\n", what, joules(*j), *w);
  constexpr std::size_t kShown = 8;
  const auto& hosts = member(e, "hosts");
  if (!hosts.is_array() || hosts.size() < 2) return out;
  for (std::size_t i = 0; i < hosts.size() && i < kShown; ++i) {
    const auto& h = hosts[i];
    const auto hj = number(h, "energy_j");
    const auto hw = number(h, "avg_power_w");
    out += fmt::format("  {}: {}, {:.0f} W ({} {})\n", text(h, "host"), hj ? joules(*hj) : "?", hw.value_or(0),
                       integer(h, "units"), scope == "gpu" ? "GPU(s)" : "node");
  }
  if (hosts.size() > kShown) out += fmt::format("  ... and {} more hosts\n", hosts.size() - kShown);
  return out;
}

}  // namespace

std::string format_health(const nlohmann::json& health, const std::vector<ResultRow>& rows) {
  if (!health.is_object()) return "";
  if (text(health, "telemetry") == "unavailable")
    return fmt::format("\nGPU telemetry: unavailable ({})\n", text(health, "reason")) + format_energy(member(health, "energy"));
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
  return out + format_energy(member(health, "energy"));
}

}  // namespace gpuscale
