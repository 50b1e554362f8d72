// Series, baselines and regressions over stored points (trend.h); the steps are level_steps.h's.
#include "history/trend.h"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/compare.h"
#include "core/error.h"
#include "history/level_steps.h"

namespace gpuscale::history {
namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

NoiseBand band_of(const RowPoint& p) {
  NoiseBand b;
  b.down = p.noise_down;
  b.up = p.noise_up;
  b.reps = static_cast<std::size_t>(std::max(0, p.reps));
  return b;
}

SeriesPoint point_of(const RowPoint& p, double value) {
  return {p.run_id, p.created_utc, value, band_of(p), software_versions(p.software), {}};
}

void fill_changes(std::vector<Series>& all) {
  for (auto& s : all)
    for (std::size_t i = 1; i < s.points.size(); ++i)
      s.points[i].changes = software_changes(s.points[i - 1].software, s.points[i].software);
}

std::string value_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::vector<std::string> software_changes(const std::map<std::string, std::string>& a,
                                          const std::map<std::string, std::string>& b) {
  std::vector<std::string> out;
  auto text = [](const std::map<std::string, std::string>& m, const std::string& k) {
    const auto it = m.find(k);
    return it == m.end() || it->second.empty() ? std::string("-") : it->second;
  };
  std::map<std::string, bool> names;
  for (const auto& [k, _] : a) names[k] = true;
  for (const auto& [k, _] : b) names[k] = true;
  for (const auto& [k, _] : names)
    if (text(a, k) != text(b, k)) out.push_back(fmt::format("{} {} -> {}", k, text(a, k), text(b, k)));
  return out;
}

std::vector<Series> row_series(const std::vector<RowPoint>& rows) {
  std::map<SeriesKey, Series> by_key;
  for (const auto& p : rows) {
    if (!p.value || p.status != "ok") continue;
    SeriesKey k{p.cluster, p.benchmark, p.params, p.gpu_count, "", ""};
    auto& s = by_key[k];
    s.key = k;
    s.unit = p.unit;
    s.points.push_back(point_of(p, *p.value));
  }
  std::vector<Series> out;
  for (auto& [_, s] : by_key) out.push_back(std::move(s));
  fill_changes(out);
  return out;
}

std::vector<Series> rank_series(const std::vector<RankPoint>& ranks, bool by_gpu) {
  // (series, run) -> the values of its ranks; points come in run time order from the store.
  std::map<SeriesKey, Series> by_key;
  std::map<std::pair<SeriesKey, std::string>, std::vector<double>> values;
  std::map<std::pair<SeriesKey, std::string>, NoiseBand> bands;  // the widest of the host's own ranks' bands
  std::map<std::pair<SeriesKey, std::string>, const RankPoint*> first;
  std::vector<std::pair<SeriesKey, std::string>> order;
  for (const auto& k : ranks) {
    // A rank of a collective measures its group, not itself: only independent rows are a host's own.
    if (!k.value || !k.valid || k.row.status != "ok" || k.row.scope != "independent") continue;
    SeriesKey key{k.row.cluster, k.row.benchmark, k.row.params, k.row.gpu_count, k.host, by_gpu ? k.gpu : ""};
    const auto id = std::make_pair(key, k.row.run_id);
    if (!values.count(id)) {
      order.push_back(id);
      first[id] = &k;
    }
    values[id].push_back(*k.value);
    NoiseBand own;
    own.down = k.noise_down;
    own.up = k.noise_up;
    own.reps = static_cast<std::size_t>(std::max(0, k.reps));
    if (!own.known()) own = band_of(k.row);  // no per-rank statistics: the row's band
    auto& b = bands[id];
    b.down = std::max(b.down, own.down);
    b.up = std::max(b.up, own.up);
    b.reps = b.reps == 0 ? own.reps : std::min(b.reps, own.reps);
  }
  for (const auto& id : order) {
    auto& s = by_key[id.first];
    s.key = id.first;
    s.unit = first[id]->row.unit;
    s.points.push_back(point_of(first[id]->row, median_of(values[id])));
    s.points.back().band = bands[id];
  }
  std::vector<Series> out;
  for (auto& [_, s] : by_key) out.push_back(std::move(s));
  fill_changes(out);
  return out;
}

namespace {

// The points of s with a value > 0 (the steps are ratios), as indices into s.points.
std::vector<std::size_t> positive_points(const Series& s) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < s.points.size(); ++i)
    if (s.points[i].value > 0) out.push_back(i);
  return out;
}

std::vector<LevelPoint> level_points(const Series& s, const std::vector<std::size_t>& idx, std::size_t from) {
  std::vector<LevelPoint> out;
  for (std::size_t i = from; i < idx.size(); ++i) out.push_back({s.points[idx[i]].value, s.points[idx[i]].band});
  return out;
}

// The window's first point: the first at or after `since`, or the latest; n when nothing is since.
template <class T, class Time>
std::size_t window_start(const std::vector<T>& items, const std::string& since, Time created) {
  if (since.empty()) return items.size() - 1;
  for (std::size_t i = 0; i < items.size(); ++i)
    if (created(items[i]) >= since) return i;
  return items.size();
}

}  // namespace

std::optional<Baseline> baseline_before(const Series& s, std::size_t end, std::size_t k) {
  auto idx = positive_points(s);
  idx.erase(std::lower_bound(idx.begin(), idx.end(), end), idx.end());  // the points before `end`
  if (idx.empty() || k == 0) return std::nullopt;
  const auto pts = level_points(s, idx, idx.size() > k ? idx.size() - k : 0);
  const Level l = reference_level(pts, 0, pts.size());
  return Baseline{l.median, l.band, l.runs};
}

std::vector<Regression> find_regressions(const std::vector<Series>& series, const RegressionRules& rules) {
  std::vector<Regression> out;
  for (const auto& s : series) {
    const Better dir = unit_direction(s.unit);
    if (dir == Better::unknown) continue;
    const auto idx = positive_points(s);
    if (idx.empty()) continue;
    const std::size_t window = window_start(idx, rules.since, [&](std::size_t i) { return s.points[i].created_utc; });
    if (window == idx.size()) continue;  // nothing since
    const std::size_t first = window > rules.lookback_runs ? window - rules.lookback_runs : 0;
    const auto pts = level_points(s, idx, first);
    std::vector<std::size_t> bounds{0};
    for (const auto step : level_steps(pts, dir, rules.threshold)) bounds.push_back(step);
    bounds.push_back(pts.size());
    // Each segment after the first that reaches into the window, against the one before its step.
    for (std::size_t j = 1; j + 1 < bounds.size(); ++j) {
      const std::size_t begin = bounds[j - 1], step = bounds[j], end = bounds[j + 1];
      if (first + end - 1 < window) continue;  // it ended before the window
      const std::size_t base = std::max(begin, step > rules.baseline_runs ? step - rules.baseline_runs : 0);
      const LevelShift shift = level_shift(pts, base, step, end, dir, run_noise(pts, 0, pts.size(), step));
      if (verdict_of_change(shift.change, rules.threshold) != Verdict::regression) continue;
      const auto& at = s.points[idx[first + step]];
      Regression r;
      r.series = &s;
      r.baseline = {shift.before.median, shift.before.band, shift.before.runs};
      r.latest = &s.points[idx[first + end - 1]];
      r.changed = &at;
      r.change = shift.change;
      r.change_points = software_changes(s.points[idx[first + step - 1]].software, at.software);
      r.level = shift.after.median;
      r.runs = shift.after.runs;
      if (end < pts.size()) r.recovered = &s.points[idx[first + end]];
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::string regression_horizon(const std::vector<RunSummary>& runs, const RegressionRules& rules) {
  std::map<std::string, std::vector<const RunSummary*>> by_cluster;
  for (const auto& r : runs) by_cluster[r.cluster].push_back(&r);
  std::optional<std::string> oldest;
  for (const auto& [_, list] : by_cluster) {
    const std::size_t window = window_start(list, rules.since, [](const RunSummary* r) { return r->created_utc; });
    if (window == list.size()) continue;  // nothing since: no series of this cluster is judged
    if (window < rules.lookback_runs) return "";
    const std::string& first = list[window - rules.lookback_runs]->created_utc;
    if (!oldest || first < *oldest) oldest = first;
  }
  return oldest.value_or(rules.since);  // no cluster has a run since: nothing is judged
}

bool params_match(const std::string& params_json, const std::string& filter) {
  if (filter.empty()) return true;
  const auto params = nlohmann::json::parse(params_json, nullptr, false);
  std::size_t pos = 0;
  while (pos <= filter.size()) {
    auto end = filter.find(',', pos);
    if (end == std::string::npos) end = filter.size();
    const std::string item = filter.substr(pos, end - pos);
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(fmt::format("invalid --params item '{}': use KEY=VALUE[,KEY=VALUE...]", item));
    const std::string key = item.substr(0, eq);
    if (!params.is_object() || !params.contains(key) || value_text(params[key]) != item.substr(eq + 1)) return false;
    pos = end + 1;
  }
  return true;
}

std::string series_label(const SeriesKey& k) {
  std::string text = k.benchmark;
  const auto params = nlohmann::json::parse(k.params, nullptr, false);
  if (params.is_object())
    for (const auto& [name, v] : params.items()) text += fmt::format(" {}={}", name, value_text(v));
  text += fmt::format(" @ {} GPU{}", k.gpu_count, k.gpu_count == 1 ? "" : "s");
  if (!k.host.empty()) text += " host " + k.host;
  if (!k.gpu.empty()) text += " gpu " + k.gpu;
  return text;
}

}  // namespace gpuscale::history
