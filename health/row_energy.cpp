#include "health/row_energy.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "core/units.h"
#include "results/result_file.h"

namespace gpuscale::health {

namespace {

// Each rank keeps two numbers of its energy object, and only when known: the scope, the source and why
// one is unknown are the row's (energy_scope, energy_invalid), so a row of 10,000 ranks does not repeat
// them 10,000 times.
void compact_rank_energy(ResultRow& row) {
  for (auto& r : row.ranks) {
    if (!r.metrics.contains("energy")) continue;
    const auto e = std::move(r.metrics["energy"]);
    r.metrics.erase("energy");
    if (!e.is_object() || !e["energy_j"].is_number() || !e["avg_power_w"].is_number()) continue;
    r.metrics["energy_j"] = e["energy_j"];
    r.metrics["avg_power_w"] = e["avg_power_w"];
  }
}

}  // namespace

void add_row_energy(ResultRow& row) {
  std::string scope;
  std::set<std::string> hosts;  // node scope: one reading per host
  // GPU scope: one reading per GPU counter per host. MIG slices of one GPU each read the whole GPU's
  // counter (its UUID in "counter"): counted once, the number of ranks sharing it said in the row.
  std::map<std::pair<std::string, std::string>, int> sharing;
  std::set<std::string> windows;  // "timed" (the timed repetitions) or "point" (the whole point)
  double joules = 0, watts = 0;
  std::string invalid;
  for (const auto& r : row.ranks) {
    if (!r.metrics.contains("energy") || !r.metrics["energy"].is_object()) continue;
    const auto& e = r.metrics["energy"];
    const auto s = e.value("scope", std::string());
    if (scope.empty()) scope = s;
    if (e.contains("window") && e["window"].is_string()) windows.insert(e["window"].get<std::string>());
    if (s != scope) {
      invalid = "its ranks' energy came from different sources (GPU and node)";
      continue;
    }
    if (s == "node" && !hosts.insert(r.host).second) continue;
    const auto counter = e.value("counter", std::string());
    if (s == "gpu" && !counter.empty() && ++sharing[{r.host, counter}] > 1) continue;
    const auto& j = e["energy_j"];
    const auto& w = e["avg_power_w"];
    if (!j.is_number() || !w.is_number()) {
      if (invalid.empty())
        invalid = fmt::format("rank {} ({}): {}", r.rank, r.host, e.value("invalid", std::string("no energy figure")));
      continue;
    }
    joules += j.get<double>();
    watts += w.get<double>();
  }
  if (scope.empty()) return;
  compact_rank_energy(row);
  row.metrics["energy_scope"] = scope;
  if (!windows.empty()) row.metrics["energy_window"] = windows.size() == 1 ? *windows.begin() : "point";
  std::string shared;
  for (const auto& [where, ranks] : sharing)
    if (ranks > 1) shared += fmt::format("{}{} ranks share {} on {}", shared.empty() ? "" : "; ", ranks, where.second, where.first);
  if (!shared.empty())
    row.metrics["energy_shared"] = shared + ": the GPU's energy counter is counted once (MIG slices read the whole GPU's)";
  if (!invalid.empty()) {
    row.metrics["energy_j"] = nullptr;
    row.metrics["avg_power_w"] = nullptr;
    row.metrics["energy_invalid"] = invalid;
    return;
  }
  row.metrics["energy_j"] = joules;
  row.metrics["avg_power_w"] = watts;
  const auto unit = per_joule_unit(row.unit);
  if (row.status != RowStatus::ok || !unit || !(watts > 0)) return;
  double work = 0;
  for (const auto& g : row.groups) {
    if (!g.value) return;  // a group without a figure: no work per joule for the row
    work += *g.value;
  }
  if (row.groups.empty()) {
    if (!row.aggregate) return;
    work = *row.aggregate;
  }
  row.metrics["work_per_j"] = work / watts;
  row.metrics["work_per_j_unit"] = *unit;
}

nlohmann::json run_energy_by_host(const std::vector<RankEnergy>& ranks) {
  nlohmann::json hosts = nlohmann::json::array();
  std::map<std::string, std::size_t> at;  // host -> index in hosts
  std::map<std::string, std::set<std::string>> counted;  // host -> GPU counters counted (MIG: once)
  std::string scope, invalid;
  for (const auto& r : ranks) {
    if (!r.energy.is_object()) continue;
    const auto s = r.energy.value("scope", std::string());
    if (scope.empty()) scope = s;
    auto [it, fresh] = at.emplace(r.host, hosts.size());
    if (fresh) hosts.push_back({{"host", r.host}, {"scope", s}, {"units", 0}, {"energy_j", 0.0}, {"avg_power_w", 0.0},
                                {"seconds", r.energy.value("seconds", 0.0)}});
    auto& h = hosts[it->second];
    if (s == "node" && !fresh) continue;  // the node's counter, already counted
    const auto counter = r.energy.value("counter", std::string());
    if (s == "gpu" && !counter.empty() && !counted[r.host].insert(counter).second) continue;  // another slice's GPU
    h["units"] = h["units"].get<int>() + 1;
    if (h.contains("invalid")) continue;
    if (!r.energy["energy_j"].is_number() || !r.energy["avg_power_w"].is_number()) {
      h["energy_j"] = nullptr;
      h["avg_power_w"] = nullptr;
      h["invalid"] = fmt::format("rank {}: {}", r.rank, r.energy.value("invalid", std::string("no energy figure")));
      if (invalid.empty()) invalid = fmt::format("{} {}", r.host, h["invalid"].get<std::string>());
      continue;
    }
    h["energy_j"] = h["energy_j"].get<double>() + r.energy["energy_j"].get<double>();
    h["avg_power_w"] = h["avg_power_w"].get<double>() + r.energy["avg_power_w"].get<double>();
  }
  nlohmann::json out = {{"scope", scope.empty() ? nlohmann::json(nullptr) : nlohmann::json(scope)}, {"hosts", hosts}};
  if (scope.empty()) invalid = "no rank read an energy counter (telemetry off or unavailable)";
  if (!invalid.empty()) {
    out["energy_j"] = nullptr;
    out["avg_power_w"] = nullptr;
    out["invalid"] = invalid;
    return out;
  }
  double j = 0, w = 0;
  for (const auto& h : hosts) {
    j += h["energy_j"].get<double>();
    w += h["avg_power_w"].get<double>();
  }
  out["energy_j"] = j;
  out["avg_power_w"] = w;
  return out;
}

}  // namespace gpuscale::health
