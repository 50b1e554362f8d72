#include "analysis/burn_capacity.h"

#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "analysis/burn_drift.h"
#include "core/stats.h"
#include "core/term_text.h"
#include "core/units.h"
#include "text/number_text.h"

namespace gpuscale {
namespace {

using nlohmann::json;

json number_or_null(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::optional<double> median_or_none(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  return median_of(v);
}

std::optional<double> mean_or_none(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

std::string model_of(const json& ranks, int rank) {
  if (!ranks.is_array() || rank < 0 || static_cast<std::size_t>(rank) >= ranks.size()) return "unknown";
  const auto& r = ranks[static_cast<std::size_t>(rank)];
  if (r.contains("device") && r["device"].is_object() && r["device"].contains("name") && r["device"]["name"].is_string())
    return r["device"]["name"].get<std::string>();
  return "unknown";
}

// One rank's figures and powers over a run of windows.
struct RankWindows {
  std::string host;
  std::vector<double> start, end;      // its figures in the first and last q windows
  std::vector<double> end_power;       // its energy's average power in the last q windows
  std::string power_scope, power_invalid;
};

}  // namespace

json burn_capacity(const std::vector<ResultRow>& rows, const json& ranks) {
  json out = json::array();
  for (const auto& [benchmark, list] : burn_windows(rows)) {
    const std::size_t n = list.size(), q = burn_quarter(n);
    std::map<std::string, std::map<int, RankWindows>> by_model;  // model -> rank -> windows
    std::vector<double> job_start, job_end;  // the row's figure, for kinds without per-GPU figures
    bool per_gpu = false;
    for (std::size_t w = 0; w < n; ++w) {
      const auto& row = *list[w];
      const bool first = w < q, last = w + q >= n;
      if (!first && !last) continue;
      const bool ok = row.status == RowStatus::ok;
      if (ok && row.aggregate) (first ? job_start : job_end).push_back(*row.aggregate);
      for (const auto& rv : row.ranks) {
        auto& r = by_model[model_of(ranks, rv.rank)][rv.rank];
        r.host = rv.host;
        if (ok && rv.valid && rv.value && *rv.value > 0) {
          per_gpu = true;
          if (first) r.start.push_back(*rv.value);
          if (last) r.end.push_back(*rv.value);
        }
        // The window's energy (health/row_energy.h): the scope and why a figure is missing are the row's.
        if (!last || !row.metrics.contains("energy_scope")) continue;
        r.power_scope = row.metrics.value("energy_scope", std::string());
        if (rv.metrics.contains("avg_power_w") && rv.metrics["avg_power_w"].is_number())
          r.end_power.push_back(rv.metrics["avg_power_w"].get<double>());
        else if (r.power_invalid.empty())
          r.power_invalid = row.metrics.value("energy_invalid", std::string("no power figure"));
      }
    }
    for (const auto& [model, by_rank] : by_model) {
      std::vector<double> boost, sustained, gpu_power;
      std::map<std::string, double> node_power;  // host -> W at sustained load
      std::set<std::string> hosts, bad_nodes;
      std::string scope, invalid;
      for (const auto& [rank, r] : by_rank) {
        hosts.insert(r.host);
        if (const auto s = median_or_none(r.start)) boost.push_back(*s);
        if (const auto e = median_or_none(r.end)) sustained.push_back(*e);
        if (scope.empty()) scope = r.power_scope;
        const auto p = mean_or_none(r.end_power);
        if (!p || !r.power_invalid.empty()) {
          if (invalid.empty())
            invalid = r.power_invalid.empty() ? fmt::format("rank {} ({}): no power figure", rank, r.host) : r.power_invalid;
          bad_nodes.insert(r.host);
          continue;
        }
        if (scope == "node") {
          node_power.emplace(r.host, *p);  // the node's counter: once per host
        } else {
          gpu_power.push_back(*p);
          node_power[r.host] += *p;
        }
      }
      for (const auto& h : bad_nodes) node_power.erase(h);  // a node with a GPU unaccounted for has no total
      std::vector<double> nodes;
      for (const auto& [h, w] : node_power) nodes.push_back(w);
      const auto b = per_gpu ? median_or_none(boost) : median_or_none(job_start);
      const auto s = per_gpu ? median_or_none(sustained) : median_or_none(job_end);
      // Per GPU only where each GPU has its own counter, and every one of them said.
      const double watts = scope == "gpu" && invalid.empty() && !gpu_power.empty() ? median_of(gpu_power) : 0.0;
      json c = {{"benchmark", benchmark},
                {"unit", list.front()->unit},
                {"model", model},
                {"gpus", by_rank.size()},
                {"nodes", hosts.size()},
                {"windows", n},
                {"per", per_gpu ? "gpu" : "job"},
                {"boost", number_or_null(b)},
                {"sustained", number_or_null(s)},
                {"sustained_ratio", b && s && *b > 0 ? json(*s / *b) : json(nullptr)},
                {"power_scope", scope.empty() ? json(nullptr) : json(scope)},
                {"power_per_gpu_w", watts > 0 ? json(watts) : json(nullptr)},
                {"power_per_node_w",
                 {{"median", number_or_null(median_or_none(nodes))},
                  {"max", nodes.empty() ? json(nullptr) : json(*std::max_element(nodes.begin(), nodes.end()))}}}};
      const auto unit = per_joule_unit(list.front()->unit);
      if (per_gpu && s && unit && watts > 0) {
        c["work_per_j"] = *s / watts;
        c["work_per_j_unit"] = *unit;
      }
      if (scope.empty() && invalid.empty()) invalid = "no window carries an energy figure (telemetry off or unavailable)";
      if (scope == "node" && invalid.empty()) invalid = "RAPL measures the node, not each GPU";
      if (!invalid.empty()) c["power_invalid"] = invalid;
      out.push_back(std::move(c));
    }
  }
  return out;
}

std::string format_burn_capacity(const json& capacity) {
  if (!capacity.is_array() || capacity.empty()) return "";
  auto num = [](const json& v, const char* unit) {
    return v.is_number() ? figure_text(v.get<double>()) + unit : std::string("-");
  };
  std::string out = "\nburn-in capacity (boost: the first quarter's median, sustained: the last quarter's; W = heat to remove):\n";
  for (const auto& c : capacity) {
    const auto& node = c["power_per_node_w"];
    out += fmt::format("  {} on {} x {} ({} node(s)), {}{}:\n", terminal_safe(c["benchmark"].get<std::string>()),
                       c["gpus"].get<std::size_t>(), terminal_safe(c["model"].get<std::string>()),
                       c["nodes"].get<std::size_t>(), terminal_safe(c["unit"].get<std::string>()),
                       c["per"] == "job" ? " (the job's)" : " per GPU");
    out += fmt::format("    boost {}, sustained {}{}", num(c["boost"], ""), num(c["sustained"], ""),
                       c["sustained_ratio"].is_number()
                           ? fmt::format(" ({:.0f}% of boost)", c["sustained_ratio"].get<double>() * 100)
                           : std::string());
    if (c["power_per_gpu_w"].is_number()) out += fmt::format("; {} per GPU", num(c["power_per_gpu_w"], " W"));
    if (node["median"].is_number())
      out += fmt::format("; {} per node (max {})", num(node["median"], " W"), num(node["max"], " W"));
    if (c.contains("work_per_j"))
      out += fmt::format("; {} {} sustained", figure_text(c["work_per_j"].get<double>()),
                         terminal_safe(c["work_per_j_unit"].get<std::string>()));
    out += "\n";
    if (c.contains("power_invalid")) out += fmt::format("    power: {}\n", terminal_safe(c["power_invalid"].get<std::string>()));
  }
  return out;
}

}  // namespace gpuscale
