#include "results/result_file.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "results/json_int.h"
#include "results/row_fields.h"

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
  v.rank = json_int(j.at("rank"), "rank");
  j.at("host").get_to(v.host);
  v.device_index = json_int(j.at("device_index"), "device_index");
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
  if (!j.at("ranks").is_array()) throw nlohmann::json::type_error::create(302, "group ranks are not a list", &j);
  for (const auto& m : j.at("ranks")) g.ranks.push_back(json_int(m, "groups/ranks"));
  g.value = get_opt<double>(j, "value");
  auto status = parse_row_status(j.at("status").get<std::string>());
  if (!status) throw nlohmann::json::other_error::create(501, "unknown group status", &j);
  g.status = *status;
  g.spread_down = j.value("spread_down", 0.0);
  g.spread_up = j.value("spread_up", 0.0);
}

std::optional<RowSpread> spread_of_ranks(const std::vector<RankValue>& ranks) {
  bool any = false;
  RowSpread b;
  for (const auto& r : ranks) {
    const auto& s = r.stats;
    if (s.n == 0) continue;
    any = true;
    b.reps = std::max(b.reps, s.n);
    if (!r.value || !(s.median > 0)) continue;
    b.down = std::max(b.down, (s.median - s.lo) / s.median);
    b.up = std::max(b.up, (s.hi - s.median) / s.median);
  }
  if (!any) return std::nullopt;
  return b;
}

namespace detail {

// Every field but ranks, groups and spread: the same in both versions.
void read_common_row_fields(const nlohmann::json& j, ResultRow& r) {
  read_row_fields(j, r);  // the scalar members, by the row-field table (results/row_fields.h)
  if (j.contains("flags") && j.at("flags").is_array())
    for (const auto& f : j.at("flags")) r.flags.push_back({f.at("kind").get<std::string>(), f.value("reason", std::string())});
  if (j.contains("idle_ranks")) j.at("idle_ranks").get_to(r.idle_ranks);
  if (j.contains("matrices") && j.at("matrices").is_array()) r.matrices = j.at("matrices");
}

}  // namespace detail

void from_json(const nlohmann::json& j, ResultRow& r) { r = result_row_from_v2(j); }

std::string row_key(const ResultRow& r) {
  // nlohmann::json objects are key-sorted, so dump() is canonical.
  return fmt::format("{}|{}|{}", r.benchmark, r.params.dump(), r.gpu_count);
}

}  // namespace gpuscale
