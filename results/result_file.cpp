#include "results/result_file.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace gpuscale {
namespace {

constexpr std::array<std::string_view, 4> kStatus{"ok", "invalid", "failed", "skipped"};

template <typename T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

template <typename T>
std::optional<T> get_opt(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<T>();
}

}  // namespace

std::string_view row_status_name(RowStatus s) { return kStatus[static_cast<std::size_t>(s)]; }

std::optional<RowStatus> parse_row_status(std::string_view s) {
  for (std::size_t i = 0; i < kStatus.size(); ++i)
    if (kStatus[i] == s) return static_cast<RowStatus>(i);
  return std::nullopt;
}

void to_json(nlohmann::json& j, const RankValue& v) {
  j = {{"rank", v.rank},     {"host", v.host},   {"device_index", v.device_index}, {"value", opt(v.value)},
       {"stats", v.stats},   {"valid", v.valid}, {"error", v.error},              {"metrics", v.metrics}};
}

void from_json(const nlohmann::json& j, RankValue& v) {
  j.at("rank").get_to(v.rank);
  j.at("host").get_to(v.host);
  j.at("device_index").get_to(v.device_index);
  v.value = get_opt<double>(j, "value");
  j.at("stats").get_to(v.stats);
  j.at("valid").get_to(v.valid);
  j.at("error").get_to(v.error);
  v.metrics = j.value("metrics", nlohmann::json::object());
}

void to_json(nlohmann::json& j, const RowGroup& g) {
  j = {{"hosts", g.hosts},
       {"ranks", g.ranks},
       {"value", opt(g.value)},
       {"status", row_status_name(g.status)},
       {"spread_down", g.spread_down},
       {"spread_up", g.spread_up}};
}

void from_json(const nlohmann::json& j, RowGroup& g) {
  j.at("hosts").get_to(g.hosts);
  j.at("ranks").get_to(g.ranks);
  g.value = get_opt<double>(j, "value");
  auto status = parse_row_status(j.at("status").get<std::string>());
  if (!status) throw nlohmann::json::other_error::create(501, "unknown group status", &j);
  g.status = *status;
  g.spread_down = j.value("spread_down", 0.0);
  g.spread_up = j.value("spread_up", 0.0);
}

namespace {

// count, min, median, max and spread ((max - min) / median) of the groups with a value.
nlohmann::json group_summary(const std::vector<RowGroup>& groups) {
  std::vector<double> v;
  for (const auto& g : groups)
    if (g.value) v.push_back(*g.value);
  nlohmann::json out = {{"count", groups.size()}, {"measured", v.size()}};
  if (v.empty()) return out;
  std::sort(v.begin(), v.end());
  const double median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  out["min"] = v.front();
  out["median"] = median;
  out["max"] = v.back();
  out["spread"] = median > 0 ? (v.back() - v.front()) / median : 0.0;
  return out;
}

}  // namespace

void to_json(nlohmann::json& j, const ResultRow& r) {
  j = {{"benchmark", r.benchmark},
       {"scope", r.scope},
       {"params", r.params},
       {"gpu_count", r.gpu_count},
       {"nodes", r.nodes},
       {"topology", r.topology},
       {"unit", r.unit},
       {"status", row_status_name(r.status)},
       {"ranks", r.ranks},
       {"aggregate", opt(r.aggregate)},
       {"scaling_efficiency", opt(r.scaling_efficiency)},
       {"efficiency_basis", r.efficiency_basis},
       {"expected_peak", opt(r.expected_peak)},
       {"fraction_of_peak", opt(r.fraction_of_peak)},
       {"peak_source", r.peak_source},
       {"metrics", r.metrics},
       {"errors", r.errors}};
  if (!r.groups.empty()) {
    j["groups"] = r.groups;
    j["group_summary"] = group_summary(r.groups);
  }
  if (!r.idle_ranks.empty()) j["idle_ranks"] = r.idle_ranks;
  if (r.matrices.is_array()) j["matrices"] = r.matrices;
}

void from_json(const nlohmann::json& j, ResultRow& r) {
  j.at("benchmark").get_to(r.benchmark);
  j.at("scope").get_to(r.scope);
  r.params = j.at("params");
  j.at("gpu_count").get_to(r.gpu_count);
  j.at("nodes").get_to(r.nodes);
  j.at("topology").get_to(r.topology);
  j.at("unit").get_to(r.unit);
  auto status = parse_row_status(j.at("status").get<std::string>());
  if (!status) throw nlohmann::json::other_error::create(501, "unknown row status", &j);
  r.status = *status;
  j.at("ranks").get_to(r.ranks);
  r.aggregate = get_opt<double>(j, "aggregate");
  r.scaling_efficiency = get_opt<double>(j, "scaling_efficiency");
  j.at("efficiency_basis").get_to(r.efficiency_basis);
  r.expected_peak = get_opt<double>(j, "expected_peak");
  r.fraction_of_peak = get_opt<double>(j, "fraction_of_peak");
  j.at("peak_source").get_to(r.peak_source);
  r.metrics = j.value("metrics", nlohmann::json::object());
  j.at("errors").get_to(r.errors);
  if (j.contains("groups")) j.at("groups").get_to(r.groups);
  if (j.contains("idle_ranks")) j.at("idle_ranks").get_to(r.idle_ranks);
  if (j.contains("matrices") && j.at("matrices").is_array()) r.matrices = j.at("matrices");
}

std::string row_key(const ResultRow& r) {
  // nlohmann::json objects are key-sorted, so dump() is canonical.
  return fmt::format("{}|{}|{}", r.benchmark, r.params.dump(), r.gpu_count);
}

}  // namespace gpuscale
