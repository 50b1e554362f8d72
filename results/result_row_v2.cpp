// The version-2 row (docs/results.md, "The row"): per-rank data as columns aligned by position, a
// column that is the same for every rank written once as a scalar, per-rank numbers rounded to 7
// significant digits, groups as columns too. This file writes it and reads it back.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <optional>

#include <fmt/format.h>

#include "core/error.h"
#include "core/stats.h"
#include "results/json_int.h"
#include "results/result_file.h"
#include "results/row_fields.h"

namespace gpuscale {
namespace {

using nlohmann::json;

// `digits` significant digits, for measured figures: the shortest text of the rounded double (which nlohmann writes) is then
// at most that many digits long.
double round_to(double x, int digits) {
  // Whole numbers are counts (bytes per pass, elements checked, wrong values): kept exactly.
  if (x == 0 || !std::isfinite(x) || (std::abs(x) < 9007199254740992.0 && std::floor(x) == x)) return x;
  char buf[40];
  const auto end = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::general, digits).ptr;
  double out = x;
  std::from_chars(buf, end, out);
  return out;
}
// Per-rank and per-group figures: 6 significant digits (one part in a million; repetition noise and
// timer resolution are far coarser).
double round6(double x) { return round_to(x, 6); }
// A relative spread (a noise estimate, e.g. 0.022): 2 digits say all it can. A ratio past the largest
// double (DBL_MAX over a tiny median, figures a file may hold) is written as the largest double: inf
// would be written as null, which no reader takes (a merged file validate refused).
double round2(double x) { return round_to(std::min(x, std::numeric_limits<double>::max()), 2); }

json rounded(const json& v) { return v.is_number_float() ? json(round6(v.get<double>())) : v; }

// A column of n entries: the scalar when every rank has the same one, else the array.
json column(json entries) {
  if (!entries.empty() && std::all_of(entries.begin(), entries.end(), [&](const json& e) { return e == entries.front(); }) &&
      !entries.front().is_null())
    return entries.front();
  return entries;
}

// Index of `host` in `hosts`, appended when new (first-appearance order).
int host_index(std::vector<std::string>& hosts, const std::string& host) {
  const auto it = std::find(hosts.begin(), hosts.end(), host);
  if (it != hosts.end()) return static_cast<int>(it - hosts.begin());
  hosts.push_back(host);
  return static_cast<int>(hosts.size()) - 1;
}

json rank_columns(const ResultRow& r, std::vector<std::string>& hosts) {
  json rank = json::array(), host = json::array(), device = json::array(), value = json::array(), valid = json::array(),
       error = json::array(), metrics = json::object();
  for (const auto& v : r.ranks) {
    rank.push_back(v.rank);
    host.push_back(host_index(hosts, v.host));
    device.push_back(v.device_index);
    value.push_back(v.value ? json(round6(*v.value)) : json(nullptr));
    valid.push_back(v.valid);
    error.push_back(v.error);
    if (v.metrics.is_object())
      for (auto it = v.metrics.begin(); it != v.metrics.end(); ++it) metrics[it.key()] = json::array();
  }
  for (auto it = metrics.begin(); it != metrics.end(); ++it) {
    json& col = it.value();
    for (const auto& v : r.ranks) {
      const bool has = v.metrics.is_object() && v.metrics.contains(it.key());
      col.push_back(has ? rounded(v.metrics.at(it.key())) : json(nullptr));
    }
    col = column(std::move(col));
  }
  json out = {{"rank", rank}, {"host", column(host)}, {"device_index", column(device)}, {"value", value},
              {"valid", column(valid)}, {"error", column(error)}, {"metrics", metrics}};
  if (r.rank_stats) {
    json n = json::array(), median = json::array(), min = json::array(), max = json::array(), mean = json::array(),
         stddev = json::array(), lo = json::array(), hi = json::array();
    for (const auto& v : r.ranks) {
      n.push_back(v.stats.n);
      median.push_back(round6(v.stats.median));
      min.push_back(round6(v.stats.min));
      max.push_back(round6(v.stats.max));
      mean.push_back(round6(v.stats.mean));
      stddev.push_back(round6(v.stats.stddev));
      lo.push_back(round6(v.stats.lo));
      hi.push_back(round6(v.stats.hi));
    }
    out["stats"] = {{"n", n},       {"median", median}, {"min", min}, {"max", max},
                    {"mean", mean}, {"stddev", stddev}, {"lo", lo},   {"hi", hi}};
  }
  return out;
}

// The distinct hosts of `ranks` in rank-list order, from the row's ranks (nullopt when one is not there).
std::optional<std::vector<std::string>> hosts_of(const std::vector<int>& ranks, const std::map<int, const std::string*>& host_of) {
  std::vector<std::string> out;
  for (int r : ranks) {
    const auto it = host_of.find(r);
    if (it == host_of.end()) return std::nullopt;
    if (std::find(out.begin(), out.end(), *it->second) == out.end()) out.push_back(*it->second);
  }
  return out;
}

// Groups tile the row when the row's ranks are their ranks in order, k at a time: the usual case (ranks
// of a node numbered together). Their ranks and hosts then follow from the row's own ranks and are not
// written (a 1-GPU row of 1,024 groups saves ~8 KB).
bool groups_tile_ranks(const ResultRow& r, const std::map<int, const std::string*>& host_of) {
  const auto k = static_cast<std::size_t>(r.gpu_count);
  if (k == 0 || r.groups.size() * k != r.ranks.size()) return false;
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    const auto& group = r.groups[g];
    if (group.ranks.size() != k) return false;
    for (std::size_t i = 0; i < k; ++i)
      if (group.ranks[i] != r.ranks[g * k + i].rank) return false;
    if (hosts_of(group.ranks, host_of) != group.hosts) return false;
  }
  return true;
}

json group_columns(const ResultRow& r, std::vector<std::string>& hosts) {
  const auto& groups = r.groups;
  std::map<int, const std::string*> host_of;
  for (const auto& v : r.ranks) host_of.emplace(v.rank, &v.host);
  const bool tiled = groups_tile_ranks(r, host_of);
  json ranks = json::array(), ghosts = json::array(), value = json::array(), status = json::array(),
       down = json::array(), up = json::array();
  for (const auto& g : groups) {
    ranks.push_back(g.ranks);
    json h = json::array();
    for (const auto& name : g.hosts) h.push_back(host_index(hosts, name));
    ghosts.push_back(std::move(h));
    value.push_back(g.value ? json(round6(*g.value)) : json(nullptr));
    status.push_back(row_status_name(g.status));
    down.push_back(round2(g.spread_down));
    up.push_back(round2(g.spread_up));
  }
  json out = {{"value", value}, {"status", column(status)}, {"spread_down", down}, {"spread_up", up}};
  if (!tiled) {
    out["ranks"] = std::move(ranks);
    out["hosts"] = std::move(ghosts);
  }
  return out;
}

// count, min, median, max and spread ((max - min) / median) of the groups with a value. From the groups'
// values as written (6 digits), so that a row read and written again is the same text (--resume keeps
// rows byte for byte), and widened to the row's own value (its median group's, in full) so that it lies
// between min and max.
json group_summary(const ResultRow& r) {
  std::vector<double> v;
  for (const auto& g : r.groups)
    if (g.value) v.push_back(round6(*g.value));
  json out = {{"count", r.groups.size()}, {"measured", v.size()}};
  if (v.empty()) return out;
  std::sort(v.begin(), v.end());
  const double median = round6(median_of(v));  // halves first: DBL_MAX values do not overflow to inf
  const double lo = r.aggregate ? std::min(v.front(), *r.aggregate) : v.front();
  const double hi = r.aggregate ? std::max(v.back(), *r.aggregate) : v.back();
  out["min"] = lo;
  out["median"] = median;
  out["max"] = hi;
  out["spread"] = median > 0 ? round2((hi - lo) / median) : 0.0;
  return out;
}

// --- Reading ---

// Entry i of a column of n: the scalar itself, or the array's i-th (its length checked once, by sized()).
const json& entry(const json& col, std::size_t i) { return col.is_array() ? col[i] : col; }

const json& sized(const json& col, std::size_t n, const std::string& name, bool scalar_allowed = true) {
  if (!col.is_array() && !scalar_allowed) throw Error(fmt::format("{}: is not an array", name));
  if (col.is_array() && col.size() != n) throw Error(fmt::format("{}: {} entries for {}", name, col.size(), n));
  return col;
}

std::string host_name(const std::vector<std::string>& hosts, const json& index, const std::string& where) {
  const auto i = index.get<long long>();
  if (i < 0 || static_cast<std::size_t>(i) >= hosts.size())
    throw Error(fmt::format("{}: host index {} is not in ranks/hosts ({} names)", where, i, hosts.size()));
  return hosts[static_cast<std::size_t>(i)];
}

void read_ranks(const json& c, ResultRow& r, std::vector<std::string>& hosts) {
  c.at("hosts").get_to(hosts);
  if (std::set<std::string>(hosts.begin(), hosts.end()).size() != hosts.size())
    throw Error("ranks/hosts: names a host twice");
  const auto& rank = c.at("rank");
  const std::size_t n = rank.size();
  const std::string of = fmt::format("{} ranks", n);
  const auto& host = sized(c.at("host"), n, "ranks/host (" + of + ")");
  const auto& device = sized(c.at("device_index"), n, "ranks/device_index (" + of + ")");
  const auto& value = sized(c.at("value"), n, "ranks/value (" + of + ")", false);
  const auto& valid = sized(c.at("valid"), n, "ranks/valid (" + of + ")");
  const auto& error = sized(c.at("error"), n, "ranks/error (" + of + ")");
  const json no_metrics = json::object();
  const auto& metrics = c.contains("metrics") ? c.at("metrics") : no_metrics;
  for (auto it = metrics.begin(); it != metrics.end(); ++it) sized(it.value(), n, "ranks/metrics/" + it.key() + " (" + of + ")");
  const json* stats = c.contains("stats") ? &c.at("stats") : nullptr;
  if (stats) {
    for (const char* k : {"n", "median", "min", "max", "mean", "stddev"})
      sized(stats->at(k), n, fmt::format("ranks/stats/{} ({})", k, of), false);
    for (const char* k : {"lo", "hi"})  // the median's bounds: files before them have min and max only
      if (stats->contains(k)) sized(stats->at(k), n, fmt::format("ranks/stats/{} ({})", k, of), false);
  }
  r.rank_stats = stats != nullptr;
  r.ranks.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto& v = r.ranks[i];
    v.rank = json_int(rank[i], "ranks/rank");
    v.host = host_name(hosts, entry(host, i), "ranks/host");
    v.device_index = json_int(entry(device, i), "ranks/device");
    if (!value[i].is_null()) v.value = value[i].get<double>();
    entry(valid, i).get_to(v.valid);
    entry(error, i).get_to(v.error);
    for (auto it = metrics.begin(); it != metrics.end(); ++it)
      if (const auto& x = entry(it.value(), i); !x.is_null()) v.metrics[it.key()] = x;
    if (stats) {
      const auto& s = *stats;
      s["n"][i].get_to(v.stats.n);
      s["median"][i].get_to(v.stats.median);
      s["min"][i].get_to(v.stats.min);
      s["max"][i].get_to(v.stats.max);
      s["mean"][i].get_to(v.stats.mean);
      s["stddev"][i].get_to(v.stats.stddev);
      v.stats.lo = s.contains("lo") ? s["lo"][i].get<double>() : v.stats.min;
      v.stats.hi = s.contains("hi") ? s["hi"][i].get<double>() : v.stats.max;
    }
  }
}

void read_groups(const json& c, ResultRow& r, const std::vector<std::string>& hosts) {
  const std::size_t g = c.at("value").size();
  const std::string of = fmt::format("{} groups", g);
  // Without ranks and hosts the groups tile the row's ranks, gpu_count at a time (groups_tile_ranks).
  json ranks, ghosts;
  if (!c.contains("ranks")) {
    const auto k = static_cast<std::size_t>(std::max(0, r.gpu_count));
    if (c.contains("hosts") || g * k != r.ranks.size())
      throw Error(fmt::format("groups: {} group(s) of {} do not tile the row's {} ranks (groups/ranks is absent)", g, k,
                              r.ranks.size()));
    ranks = json::array();
    ghosts = json::array();
    for (std::size_t i = 0; i < g; ++i) {
      json members = json::array(), names = json::array();
      std::vector<std::string> seen;
      for (std::size_t j = i * k; j < (i + 1) * k; ++j) {
        members.push_back(r.ranks[j].rank);
        const auto& h = r.ranks[j].host;
        if (std::find(seen.begin(), seen.end(), h) == seen.end()) {
          seen.push_back(h);
          names.push_back(std::find(hosts.begin(), hosts.end(), h) - hosts.begin());
        }
      }
      ranks.push_back(std::move(members));
      ghosts.push_back(std::move(names));
    }
  } else {
    ranks = c.at("ranks");
    ghosts = c.at("hosts");
  }
  sized(ranks, g, "groups/ranks (" + of + ")", false);
  sized(ghosts, g, "groups/hosts (" + of + ")", false);
  const auto& value = sized(c.at("value"), g, "groups/value (" + of + ")", false);
  const auto& status = sized(c.at("status"), g, "groups/status (" + of + ")");
  const auto& down = sized(c.at("spread_down"), g, "groups/spread_down (" + of + ")", false);
  const auto& up = sized(c.at("spread_up"), g, "groups/spread_up (" + of + ")", false);
  r.groups.resize(g);
  for (std::size_t i = 0; i < g; ++i) {
    auto& group = r.groups[i];
    if (!ranks[i].is_array()) throw Error("groups/ranks: each group's ranks are a list");
    for (const auto& m : ranks[i]) group.ranks.push_back(json_int(m, "groups/ranks"));
    for (const auto& h : ghosts[i]) group.hosts.push_back(host_name(hosts, h, "groups/hosts"));
    if (!value[i].is_null()) group.value = value[i].get<double>();
    const auto s = parse_row_status(entry(status, i).get<std::string>());
    if (!s) throw Error("groups/status: unknown group status");
    group.status = *s;
    down[i].get_to(group.spread_down);
    up[i].get_to(group.spread_up);
  }
}

}  // namespace

void to_json(json& j, const ResultRow& r) {
  std::vector<std::string> hosts;
  json ranks = rank_columns(r, hosts);
  j = json::object();
  write_row_fields(j, r);  // the scalar members, by the row-field table (results/row_fields.h)
  if (!r.groups.empty()) {
    j["groups"] = group_columns(r, hosts);  // may add hosts no rank of the row is on
    j["group_summary"] = group_summary(r);
  }
  ranks["hosts"] = hosts;
  j["ranks"] = std::move(ranks);
  // The spread read with the row is kept as read (its ranks' statistics, if any, are rounded).
  if (const auto s = r.spread ? r.spread : spread_of_ranks(r.ranks))
    j["spread"] = {{"down", round2(s->down)}, {"up", round2(s->up)}, {"reps", s->reps}};
  if (!r.flags.empty()) {
    json flags = json::array();
    for (const auto& f : r.flags) flags.push_back({{"kind", f.kind}, {"reason", f.reason}});
    j["flags"] = std::move(flags);
  }
  if (!r.idle_ranks.empty()) j["idle_ranks"] = r.idle_ranks;
  if (r.matrices.is_array()) j["matrices"] = r.matrices;
}

ResultRow result_row_from_v2(const json& j) {
  ResultRow r;
  detail::read_common_row_fields(j, r);
  std::vector<std::string> hosts;
  read_ranks(j.at("ranks"), r, hosts);
  if (j.contains("groups")) read_groups(j.at("groups"), r, hosts);
  if (j.contains("spread")) {
    const auto& s = j.at("spread");
    r.spread = RowSpread{s.at("down").get<double>(), s.at("up").get<double>(), s.at("reps").get<std::size_t>()};
  }
  return r;
}

}  // namespace gpuscale
