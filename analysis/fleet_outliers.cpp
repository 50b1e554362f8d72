#include "analysis/fleet_outliers.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/row_text.h"
#include "core/term_text.h"
#include "text/number_text.h"

namespace gpuscale {

void add_outlier_gpus(nlohmann::json& out, const std::vector<int>& ranks, const nlohmann::json& identities) {
  using nlohmann::json;
  out["uuids"] = json::array();
  out["pci_bus_ids"] = json::array();
  for (int r : ranks) {
    if (r < 0 || !identities.is_array() || static_cast<std::size_t>(r) >= identities.size()) continue;
    const auto& id = identities[static_cast<std::size_t>(r)];
    if (!id.is_object() || !id.contains("device") || !id["device"].is_object()) continue;
    const auto& details = id["device"].value("details", json::object());
    if (!details.is_object()) continue;
    if (details.contains("uuid") && details["uuid"].is_string()) out["uuids"].push_back(details["uuid"]);
    if (details.contains("pci_bus_id") && details["pci_bus_id"].is_string()) out["pci_bus_ids"].push_back(details["pci_bus_id"]);
  }
}

namespace {

using nlohmann::json;

constexpr int kNoRail = -1, kBadRail = -2;

std::vector<double> numbers(const json& row) {
  std::vector<double> out;
  for (const auto& v : row) out.push_back(v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN());
  return out;
}

// A matrix entry of a row (the format rows.matrices[] has, docs/results.md) as outliers.h reads it;
// nullopt when its shape is not M x M.
std::optional<PairMatrix> pair_matrix(const json& m) {
  if (!m.is_object() || !m.contains("hosts") || !m.contains("values") || !m["hosts"].is_array() || !m["values"].is_array())
    return std::nullopt;
  PairMatrix p;
  for (const auto& h : m["hosts"]) p.hosts.push_back(h.is_string() ? h.get<std::string>() : std::string());
  const auto size = p.hosts.size();
  for (const auto& row : m["values"]) {
    if (!row.is_array() || row.size() != size) return std::nullopt;
    p.values.push_back(numbers(row));
  }
  if (p.values.size() != size) return std::nullopt;
  for (const char* key : {"spread_down", "spread_up"}) {
    auto& out = std::string(key) == "spread_down" ? p.spread_down : p.spread_up;
    if (!m.contains(key) || !m[key].is_array() || m[key].size() != size) continue;
    for (const auto& row : m[key]) {
      auto v = row.is_array() && row.size() == size ? numbers(row) : std::vector<double>(size, 0.0);
      for (auto& x : v)
        if (!std::isfinite(x)) x = 0;
      out.push_back(std::move(v));
    }
  }
  if (m.contains("ranks") && m["ranks"].is_array() && m["ranks"].size() == size)
    for (const auto& rs : m["ranks"]) {
      std::vector<int> ranks;
      if (rs.is_array())
        for (const auto& r : rs)
          if (r.is_number_integer()) ranks.push_back(r.get<int>());
      p.ranks.push_back(std::move(ranks));
    }
  p.directed = m.value("directed", false);
  return p;
}

json record(const Outlier& o, const ResultRow& row, const json& identities) {
  json out = outlier_json(o);
  out["benchmark"] = row.benchmark;
  out["params"] = row.params;
  out["gpu_count"] = row.gpu_count;
  out["unit"] = row.unit;
  add_outlier_gpus(out, o.ranks, identities);
  return out;
}

// The NICs of a rail outlier's ranks, from the rank identities (ranks[].device.details.nic: the NIC
// nearest the GPU, docs/fleet.md "Rails"), null where the identity has none, with the first reason given.
void add_nics(json& out, const std::vector<int>& ranks, const json& identities) {
  out["nics"] = json::array();
  std::string note;
  for (int r : ranks) {
    json nic = nullptr;
    std::string why = "the rank's identity records no NIC";
    if (r >= 0 && identities.is_array() && static_cast<std::size_t>(r) < identities.size()) {
      const auto& id = identities[static_cast<std::size_t>(r)];
      const json& device = id.is_object() && id.contains("device") ? id["device"] : json();
      const json& details = device.is_object() && device.contains("details") ? device["details"] : json();
      if (details.is_object() && details.contains("nic") && details["nic"].is_object()) {
        const auto& n = details["nic"];
        if (n.contains("device") && n["device"].is_string() && n.contains("port") && n["port"].is_number_integer() &&
            n["port"].get<std::int64_t>() >= 1 && n["port"].get<std::int64_t>() <= INT32_MAX)
          nic = {{"device", n["device"]}, {"port", n["port"]}};
      }
      if (details.is_object() && details.contains("nic_note") && details["nic_note"].is_string())
        why = details["nic_note"].get<std::string>();
    }
    if (nic.is_null() && note.empty()) note = why;
    out["nics"].push_back(std::move(nic));
  }
  if (!note.empty()) out["nic_note"] = note;
}

// The rail of a matrices[] entry: its index for kind "rail", nullopt for the others; a rail matrix
// without a valid index is not read (-1).
int rail_of(const json& m) {
  const auto& kind = m.contains("kind") ? m["kind"] : json();
  if (!kind.is_string() || kind.get<std::string>() != "rail") return kNoRail;
  const auto& rail = m.contains("rail") ? m["rail"] : json();
  if (!rail.is_number_integer() || rail.get<std::int64_t>() < 0 || rail.get<std::int64_t>() > INT32_MAX) return kBadRail;
  return static_cast<int>(rail.get<std::int64_t>());
}

// Node and pair outliers of a node-pair matrix that a rail outlier of the same row series (benchmark
// and GPU count: the sendrecv's rails also carry the all_reduce's traffic between the same nodes)
// explains: a node pair is as fast as its slowest rail, so the sick rail makes the node slow in the
// node matrix too, and the rail's record is the one that says where. They keep their record, marked
// explained_by (the host) and explained_by_rail, and are not listed again.
void explain_by_rails(json& list) {
  std::map<std::string, int> node_rail, pair_rail;  // "benchmark|count|host[|host]" -> lowest rail
  auto key = [](const json& o, std::vector<std::string> hosts) {
    std::sort(hosts.begin(), hosts.end());
    std::string k = fmt::format("{}|{}", o.value("benchmark", std::string()), o.value("gpu_count", 0));
    for (const auto& h : hosts) k += "|" + h;
    return k;
  };
  auto hosts_of = [](const json& o) { return o["hosts"].get<std::vector<std::string>>(); };
  for (const auto& o : list) {
    if (!o.contains("rail")) continue;
    auto& to = o["kind"] == "node" ? node_rail : pair_rail;
    const int rail = o["rail"].get<int>();
    auto [it, fresh] = to.emplace(key(o, hosts_of(o)), rail);
    if (!fresh) it->second = std::min(it->second, rail);
  }
  for (auto& o : list) {
    if (o.contains("rail") || (o["kind"] != "node" && o["kind"] != "pair")) continue;
    const auto hosts = hosts_of(o);
    if (o["kind"] == "node") {
      const auto it = node_rail.find(key(o, hosts));
      if (it == node_rail.end()) continue;
      o["explained_by"] = hosts.front();
      o["explained_by_rail"] = it->second;
      o["reason"] = o["reason"].get<std::string>() +
                    fmt::format("; explained by {}'s outlier on rail {} (a node pair is as fast as its slowest rail)",
                                hosts.front(), it->second);
    } else if (const auto it = pair_rail.find(key(o, hosts)); it != pair_rail.end()) {
      o["explained_by_rail"] = it->second;
      o["reason"] = o["reason"].get<std::string>() +
                    fmt::format("; explained by the outlier link on rail {} between the same nodes", it->second);
    }
  }
}

// A collective's groups are compared at its largest message size only, as pairwise health checks
// measure one large message: small messages measure latency, whose noise from one host to the next
// (a shared or loaded machine, the OS) is not what makes a node sick.
std::set<std::string> largest_sizes(const std::vector<ResultRow>& rows) {
  std::map<std::string, std::pair<double, std::string>> largest;  // series -> (size, row key)
  for (const auto& row : rows) {
    if (row.scope != "collective" || !row.params.contains("size_bytes") || !row.params["size_bytes"].is_number()) continue;
    auto series = row.params;
    series.erase("size_bytes");
    const auto key = fmt::format("{}|{}|{}", row.benchmark, series.dump(), row.gpu_count);
    const double size = row.params["size_bytes"].get<double>();
    auto [it, fresh] = largest.emplace(key, std::make_pair(size, row_key(row)));
    if (!fresh && size > it->second.first) it->second = {size, row_key(row)};
  }
  std::set<std::string> out;
  for (const auto& [series, best] : largest) out.insert(best.second);
  return out;
}

bool compared(const ResultRow& row, const std::set<std::string>& largest) {
  if (row.scope != "collective" || !row.params.contains("size_bytes")) return true;
  return largest.count(row_key(row)) > 0;
}

// " on rail 1 (NIC mlx5_1 port 1)" for a rail outlier, "" for the others.
std::string rail_text(const json& o) {
  if (!o.contains("rail")) return "";
  std::vector<std::string> nics;
  for (const auto& n : o.value("nics", json::array()))
    if (n.is_object()) nics.push_back(terminal_safe(fmt::format("{} port {}", n["device"].get<std::string>(), n["port"].get<int>())));
  return fmt::format(" on rail {}{}", o["rail"].get<int>(),
                     nics.empty() ? std::string() : fmt::format(" (NIC {})", fmt::join(nics, ", ")));
}

// A row's matrix as the rule reads it: parsed once, both to count the members the run judges and to
// judge them.
struct ReadMatrix {
  const ResultRow* row;
  PairMatrix matrix;
  int rail;
  OutlierKind kind;
};

std::vector<ReadMatrix> read_matrices(const std::vector<ResultRow>& rows) {
  std::vector<ReadMatrix> out;
  for (const auto& row : rows) {
    if (!row.matrices.is_array()) continue;
    for (const auto& m : row.matrices) {
      auto matrix = pair_matrix(m);
      const int rail = matrix ? rail_of(m) : kBadRail;
      if (!matrix || rail == kBadRail) continue;
      if (rail != kNoRail) matrix->member_name = fmt::format("node's rail {}", rail);
      out.push_back({&row, std::move(*matrix), rail, m["kind"] == "gpu" ? OutlierKind::gpu : OutlierKind::node});
    }
  }
  return out;
}

// One entry of analysis.power: a population of a row, what its members are, and the rule's bar and
// power there (docs/fleet.md, "The power of a verdict").
json power_entry(const ResultRow& row, const std::string& members, const OutlierFloor& f, const json& rail) {
  json e = {{"benchmark", row.benchmark}, {"params", row.params}, {"gpu_count", row.gpu_count}, {"unit", row.unit},
            {"members", members},         {"population", f.population}, {"sigma", f.sigma},       {"z", f.z},
            {"bar", f.bar},               {"detectable", f.detectable}, {"useful", f.detectable <= kUsefulBar}};
  if (!rail.is_null()) e["rail"] = rail;
  return e;
}

// "GPU" for a count's 1-GPU groups, "group of N GPUs" beyond.
std::string group_members(int gpu_count) { return gpu_count == 1 ? "GPU" : fmt::format("group of {} GPUs", gpu_count); }

}  // namespace

json fleet_outliers(const std::vector<ResultRow>& rows, const json& ranks, const OutlierRule& base_rule) {
  json list = json::array();
  json power = json::array();
  const auto largest = largest_sizes(rows);
  const auto matrices = read_matrices(rows);
  // The members the run judges, over every population below: the rule's correction for naming at most
  // `false_alarm` things in a clean run, whatever its size.
  std::size_t judged = 0;
  for (const auto& row : rows)
    if (row.groups.size() >= base_rule.min_population && compared(row, largest)) judged += row.groups.size();
  for (const auto& r : matrices) judged += matrix_judged(r.matrix);
  OutlierRule rule = base_rule;
  rule.judged = std::max(rule.judged, judged);
  auto next = matrices.begin();  // in row order: each row's groups, then its matrices
  for (const auto& group_row : rows) {
    if (group_row.groups.size() >= rule.min_population && compared(group_row, largest)) {
      std::vector<OutlierSample> samples;
      for (const auto& g : group_row.groups)
        samples.push_back({g.hosts, g.ranks, g.value.value_or(0.0), g.spread_down, g.spread_up});
      for (const auto& o : find_outliers(OutlierKind::group, samples, rule)) list.push_back(record(o, group_row, ranks));
      if (const auto f = outlier_floor(samples, rule); f.population > 0)
        power.push_back(power_entry(group_row, group_members(group_row.gpu_count), f, nullptr));
    }
    for (; next != matrices.end() && next->row == &group_row; ++next) {
      const auto& [row, matrix, rail, kind] = *next;
      MatrixFloors floors;
      for (const auto& o : matrix_outliers(matrix, kind, rule, &floors)) {
        auto e = record(o, *row, ranks);
        if (rail != kNoRail) {  // the node's GPU and NIC on that rail, or the link between rail counterparts
          e["rail"] = rail;
          e["reason"] = fmt::format("on rail {} (local rank {} of each node: its GPU, NIC, cable and switch port): {}", rail,
                                    rail, o.reason);
          add_nics(e, o.ranks, ranks);
        }
        list.push_back(std::move(e));
      }
      const json rail_json = rail == kNoRail ? json(nullptr) : json(rail);
      const bool gpus = kind == OutlierKind::gpu;
      auto entry = [&](const std::string& members, const OutlierFloor& f) {
        auto e = power_entry(*row, members, f, rail_json);
        if (gpus && !matrix.hosts.empty()) e["host"] = matrix.hosts.front();  // one node's GPU-pair matrix
        power.push_back(std::move(e));
      };
      if (floors.members.population > 0) entry(gpus ? "GPU" : rail == kNoRail ? "node" : "node's rail", floors.members);
      if (floors.pairs.population > 0) entry(gpus ? "GPU pair link" : rail == kNoRail ? "node pair" : "rail link", floors.pairs);
    }
  }
  explain_by_rails(list);
  // Suspect hosts: what a single node explains (docs/fleet.md, "Acting on an outlier").
  std::set<std::string> suspects;
  for (const auto& o : list) {
    const auto kind = o["kind"].get<std::string>();
    const auto& hosts = o["hosts"];
    if (kind == "node" || kind == "gpu" || (kind == "group" && hosts.size() == 1))
      for (const auto& h : hosts) suspects.insert(h.get<std::string>());
  }
  for (auto& o : list) {
    const auto kind = o["kind"].get<std::string>();
    if (!(kind == "pair" || (kind == "group" && o["hosts"].size() > 1))) continue;
    for (const auto& h : o["hosts"])
      if (suspects.count(h.get<std::string>())) {
        o["explained_by"] = h;
        break;
      }
  }
  return {{"outliers", list},
          {"outlier_hosts", std::vector<std::string>(suspects.begin(), suspects.end())},
          {"outlier_rule",
           {{"fraction", rule.fraction}, {"min_effect", rule.min_effect}, {"false_alarm", rule.false_alarm},
            {"judged", rule.judged}, {"min_population", rule.min_population}}},
          {"power", power}};
}

std::string format_fleet_outliers(const json& fleet, std::size_t max_lines) {
  if (!fleet.is_object() || !fleet.contains("outliers") || fleet["outliers"].empty()) return "";
  const auto& list = fleet["outliers"];
  std::string out = fmt::format("\nfleet outliers (below the median beyond the run's noise): {}\n", list.size());
  std::vector<std::string> hosts;
  for (const auto& h : fleet["outlier_hosts"]) hosts.push_back(terminal_safe(h.get<std::string>()));
  out += fmt::format("  suspect hosts: {}\n", hosts.empty() ? std::string("none (slow groups or links only)")
                                                            : fmt::format("{}", fmt::join(hosts, " ")));
  std::size_t shown = 0, explained = 0;
  for (const auto& o : list) {
    if (o.contains("explained_by") || o.contains("explained_by_rail")) {
      ++explained;
      continue;
    }
    if (shown++ == max_lines) break;
    std::vector<std::string> names;
    for (const auto& h : o["hosts"]) names.push_back(terminal_safe(h.get<std::string>()));
    out += fmt::format("  {:<5} {:<24} {} {} at {} GPU(s){}: {} vs median {} {} ({:+.0f}%)\n",
                       o["kind"].get<std::string>(), fmt::format("{}", fmt::join(names, "+")),
                       terminal_safe(o["benchmark"].get<std::string>()), terminal_safe(params_label(o["params"], false)),
                       o["gpu_count"].get<int>(), rail_text(o), figure_text(o["value"].get<double>()),
                       figure_text(o["median"].get<double>()),
                       terminal_safe(o.value("unit", std::string())), -o["deficit"].get<double>() * 100);
  }
  if (shown > max_lines) out += fmt::format("  ... more in the result file's analysis.outliers\n");
  if (explained > 0)
    out += fmt::format("  ({} more slow groups, nodes or pairs are explained by a suspect host or a slow rail)\n", explained);
  return out;
}

}  // namespace gpuscale
