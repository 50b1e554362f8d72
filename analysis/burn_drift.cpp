#include "analysis/burn_drift.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/burn_capacity.h"
#include "analysis/fleet_outliers.h"
#include "core/stats.h"
#include "core/term_text.h"
#include "text/number_text.h"

namespace gpuscale {
namespace {

using nlohmann::json;

// One rank's figure in one window, with the interval of its median (the value itself when the row kept
// no per-rank statistics).
struct Cell {
  std::optional<double> value;
  double lo = 0, hi = 0;
};

struct RankSeries {
  std::string host;
  int device_index = 0;
  std::vector<Cell> cells;  // by window, in time order
};

}  // namespace

std::map<std::string, std::vector<const ResultRow*>> burn_windows(const std::vector<ResultRow>& rows) {
  std::map<std::string, std::vector<const ResultRow*>> out;
  for (const auto& r : rows)
    if (r.benchmark.rfind("burn.", 0) == 0 && r.params.contains("window") && r.params["window"].is_number_integer())
      out[r.benchmark].push_back(&r);
  for (auto& [key, list] : out)
    std::stable_sort(list.begin(), list.end(), [](const ResultRow* a, const ResultRow* b) {
      return a->params["window"].get<long long>() < b->params["window"].get<long long>();
    });
  return out;
}

std::size_t burn_quarter(std::size_t windows) { return std::max<std::size_t>(1, windows / 4); }

namespace {

std::map<int, RankSeries> series_of(const std::vector<const ResultRow*>& rows) {
  std::map<int, RankSeries> out;
  for (std::size_t w = 0; w < rows.size(); ++w)
    for (const auto& rv : rows[w]->ranks) {
      auto& s = out[rv.rank];
      s.host = rv.host;
      s.device_index = rv.device_index;
      s.cells.resize(rows.size());
      // A window whose check failed holds no figure: what it measured is not trusted.
      if (rows[w]->status != RowStatus::ok || !rv.valid || !rv.value || !(*rv.value > 0)) continue;
      const bool stats = rv.stats.n > 0;
      s.cells[w] = {rv.value, stats ? rv.stats.lo : *rv.value, stats ? rv.stats.hi : *rv.value};
    }
  return out;
}

std::optional<double> median_over(const std::vector<Cell>& cells, std::size_t from, std::size_t to) {
  std::vector<double> v;
  for (std::size_t w = from; w < to && w < cells.size(); ++w)
    if (cells[w].value) v.push_back(*cells[w].value);
  if (v.empty()) return std::nullopt;
  return median_of(v);
}

json number_or_null(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// Lowest window of a series: {value, window}.
std::optional<std::pair<double, std::size_t>> worst_of(const std::vector<Cell>& cells) {
  std::optional<std::pair<double, std::size_t>> worst;
  for (std::size_t w = 0; w < cells.size(); ++w)
    if (cells[w].value && (!worst || *cells[w].value < worst->first)) worst = std::pair{*cells[w].value, w};
  return worst;
}

json drift_json(const std::optional<double>& start, const std::optional<double>& end,
                const std::optional<std::pair<double, std::size_t>>& worst, const std::vector<const ResultRow*>& rows) {
  json out = {{"start", number_or_null(start)}, {"end", number_or_null(end)}, {"drift", nullptr},
              {"worst", nullptr}, {"worst_window", nullptr}};
  if (start && end && *start > 0) out["drift"] = *end / *start - 1;
  if (worst) {
    out["worst"] = worst->first;
    out["worst_window"] = rows[worst->second]->params["window"];
  }
  return out;
}

}  // namespace

json burn_drift(const std::vector<ResultRow>& rows, const json& ranks, double fraction) {
  json burn = json::array(), sustained = json::array();
  for (const auto& [benchmark, list] : burn_windows(rows)) {
    const std::size_t n = list.size();
    const std::size_t q = burn_quarter(n);
    const auto all = series_of(list);
    // The fleet's figure per window: the median over the ranks that measured it.
    std::vector<Cell> fleet(n);
    for (std::size_t w = 0; w < n; ++w) {
      std::vector<double> v;
      for (const auto& [rank, s] : all)
        if (s.cells[w].value) v.push_back(*s.cells[w].value);
      if (!v.empty()) fleet[w].value = median_of(v);
      fleet[w].lo = fleet[w].hi = fleet[w].value.value_or(0);
    }
    json entry = {{"benchmark", benchmark}, {"unit", list.front()->unit}, {"windows", n},
                  {"fleet", drift_json(median_over(fleet, 0, q), median_over(fleet, n - q, n), worst_of(fleet), list)},
                  {"ranks", json::array()}};
    const bool per_gpu = benchmark != "burn.all_reduce";  // a collective's figure is its slowest member's
    // What the fleet's own drift explains (3 or more ranks: with fewer, no peers tell it apart).
    const auto fleet_start = median_over(fleet, 0, q), fleet_end = median_over(fleet, n - q, n);
    const double fleet_ratio = all.size() >= 3 && fleet_start && fleet_end && *fleet_start > 0 ? *fleet_end / *fleet_start : 1.0;
    for (const auto& [rank, s] : all) {
      const auto start = median_over(s.cells, 0, q), end = median_over(s.cells, n - q, n);
      json r = drift_json(start, end, worst_of(s.cells), list);
      r["rank"] = rank;
      r["host"] = s.host;
      r["device_index"] = s.device_index;
      entry["ranks"].push_back(r);
      if (!per_gpu || n < 2 || !start || !end) continue;
      // Below its own start, more than the fleet fell, beyond the noise of its windows' repetitions.
      bool below_self = *end < (1 - fraction) * fleet_ratio * *start;
      for (std::size_t a = n - q; below_self && a < n; ++a)
        for (std::size_t b = 0; below_self && b < q; ++b)
          if (s.cells[a].value && s.cells[b].value && !(s.cells[a].hi < s.cells[b].lo)) below_self = false;
      // Below the fleet in every one of its last windows.
      bool below_fleet = all.size() >= 3;
      std::vector<double> ratios;
      for (std::size_t w = n - q; below_fleet && w < n; ++w) {
        if (!s.cells[w].value || !fleet[w].value) {
          below_fleet = false;
          break;
        }
        const double floor = (1 - fraction) * *fleet[w].value;
        below_fleet = *s.cells[w].value < floor && s.cells[w].hi < floor;
        ratios.push_back(*s.cells[w].value / *fleet[w].value);
      }
      if (!below_self && !below_fleet) continue;
      const double ref = below_self ? *start : fleet_end.value_or(0);
      json o = {{"kind", "sustained"}, {"benchmark", benchmark}, {"params", {{"kind", list.front()->params.value("kind", "")}}},
                {"gpu_count", list.front()->gpu_count}, {"hosts", {s.host}}, {"ranks", {rank}}, {"value", *end},
                {"median", ref}, {"deficit", ref > 0 ? 1 - *end / ref : 0.0}, {"unit", list.front()->unit},
                {"windows", {list[n - q]->params["window"], list[n - 1]->params["window"]}}};
      std::string why;
      if (below_self)
        why = fmt::format("its last {} window(s) {:.0f}% below its first {} ({} vs {} {}; the fleet's {:+.0f}%)", q,
                          (1 - *end / *start) * 100, q, figure_text(*end), figure_text(*start), list.front()->unit, (fleet_ratio - 1) * 100);
      if (below_fleet)
        why += fmt::format("{}{:.0f}% below the fleet's median in each of its last {} window(s)", why.empty() ? "" : "; ",
                           (1 - median_of(ratios)) * 100, q);
      // The throttle reasons its GPU reported in those windows (NVML telemetry beside each window).
      std::set<std::string> reasons;
      bool watched = false;
      for (std::size_t w = n - q; w < n; ++w)
        for (const auto& rv : list[w]->ranks) {
          if (rv.rank != rank || !rv.metrics.contains("telemetry") || !rv.metrics["telemetry"].is_object()) continue;
          watched = true;
          for (const auto& t : rv.metrics["telemetry"].value("throttle_reasons", json::array()))
            if (t.is_string()) reasons.insert(t.get<std::string>());
        }
      if (watched) {
        o["throttle_reasons"] = std::vector<std::string>(reasons.begin(), reasons.end());
        why += reasons.empty() ? "; no throttle reason reported"
                               : fmt::format("; throttled: {}", fmt::join(reasons, ", "));
      }
      o["reason"] = why;
      add_outlier_gpus(o, {rank}, ranks);
      sustained.push_back(std::move(o));
    }
    burn.push_back(std::move(entry));
  }
  return {{"burn", burn}, {"sustained", sustained}};
}

json burn_corruption(const std::vector<ResultRow>& rows, const json& ranks) {
  json out = json::array();
  for (const auto& [benchmark, list] : burn_windows(rows))
    for (const ResultRow* r : list)
      for (const auto& rv : r->ranks) {
        if (rv.metrics.value("sdc", std::string()) != "disagrees") continue;
        json e = {{"benchmark", benchmark}, {"window", r->params["window"]}, {"rank", rv.rank}, {"host", rv.host},
                  {"device_index", rv.device_index}, {"first_block", rv.metrics.value("sdc_block", -1)},
                  {"elements", rv.metrics.value("sdc_elements", json::array())},
                  {"agreeing", rv.metrics.value("sdc_agreeing", 0)}, {"compared", rv.metrics.value("sdc_compared", 0)}};
        if (rv.metrics.contains("sdc_element")) e["element"] = rv.metrics["sdc_element"];  // the first that differs
        if (rv.metrics.contains("sdc_at")) e["at"] = rv.metrics["sdc_at"];                // [row, column] of C
        // Its place on its host: the ranks of the host before it (the CPU backend's device index is 0 on
        // every rank; a test host's ranks act as its local ranks, world/test_hosts.h).
        e["local_rank"] = std::count_if(r->ranks.begin(), r->ranks.end(),
                                        [&](const RankValue& o) { return o.host == rv.host && o.rank < rv.rank; });
        add_outlier_gpus(e, {rv.rank}, ranks);
        out.push_back(std::move(e));
      }
  return out;
}

std::string format_burn_drift(const json& drift) {
  if (!drift.is_object() || !drift.contains("burn") || drift["burn"].empty()) return "";
  std::string out = "\nburn-in drift (the last quarter of the windows against the first):\n";
  for (const auto& b : drift["burn"]) {
    const auto& f = b["fleet"];
    out += fmt::format("  {:<16} {} windows: fleet {} -> {} {} ({}), worst window {} at {}\n",
                       terminal_safe(b["benchmark"].get<std::string>()), b["windows"].get<std::size_t>(),
                       f["start"].is_number() ? figure_text(f["start"].get<double>()) : "-",
                       f["end"].is_number() ? figure_text(f["end"].get<double>()) : "-",
                       terminal_safe(b["unit"].get<std::string>()),
                       f["drift"].is_number() ? fmt::format("{:+.1f}%", f["drift"].get<double>() * 100) : "no drift",
                       f["worst_window"].is_number() ? fmt::format("{}", f["worst_window"].get<long long>()) : "-",
                       f["worst"].is_number() ? figure_text(f["worst"].get<double>()) : "-");
  }
  for (const auto& e : drift.value("sdc", json::array()))
    out += fmt::format("  silent data corruption: rank {} ({}, device {}, local rank {}) {} window {}: its output differs "
                       "from the one {} of {} ranks share, first {}\n",
                       e["rank"].get<int>(), terminal_safe(e["host"].get<std::string>()), e["device_index"].get<int>(),
                       e.value("local_rank", json("-")).dump(),
                       terminal_safe(e["benchmark"].get<std::string>()), e["window"].dump(), e["agreeing"].dump(),
                       e["compared"].dump(),
                       e.contains("element") ? fmt::format("at element {} (C{})", e["element"].dump(), e.value("at", json()).dump())
                                             : "in elements " + e["elements"].dump());
  return out + format_burn_capacity(drift.value("capacity", json::array()));
}

}  // namespace gpuscale
