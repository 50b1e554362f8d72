// Series, baselines and regressions over stored points (trend.h).
#include "history/trend.h"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/compare.h"
#include "core/error.h"

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

std::optional<Baseline> baseline_before(const Series& s, std::size_t end, std::size_t k) {
  end = std::min(end, s.points.size());
  if (end == 0 || k == 0) return std::nullopt;
  const std::size_t start = end > k ? end - k : 0;
  std::vector<double> v;
  Baseline b;
  b.band.reps = SIZE_MAX;
  for (std::size_t i = start; i < end; ++i) {
    const auto& p = s.points[i];
    v.push_back(p.value);
    b.band.down = std::max(b.band.down, p.band.down);
    b.band.up = std::max(b.band.up, p.band.up);
    b.band.reps = std::min(b.band.reps, p.band.reps);
  }
  b.median = median_of(v);
  b.runs = v.size();
  if (b.median > 0) {  // the runs' own spread around their median: run-to-run noise
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    b.band.down = std::max(b.band.down, (b.median - *lo) / b.median);
    b.band.up = std::max(b.band.up, (*hi - b.median) / b.median);
  }
  return b;
}

std::vector<Regression> find_regressions(const std::vector<Series>& series, const RegressionRules& rules) {
  std::vector<Regression> out;
  for (const auto& s : series) {
    const Better dir = unit_direction(s.unit);
    if (dir == Better::unknown || s.points.empty()) continue;
    std::size_t window = s.points.size() - 1;  // the first point of the window
    if (!rules.since.empty()) {
      window = s.points.size();
      for (std::size_t i = 0; i < s.points.size(); ++i)
        if (s.points[i].created_utc >= rules.since) {
          window = i;
          break;
        }
      if (window == s.points.size()) continue;  // nothing since
    }
    const auto base = baseline_before(s, window, rules.baseline_runs);
    if (!base || base->median <= 0) continue;
    auto judge = [&](const SeriesPoint& p) {
      const Change c = change_of(dir, base->median, p.value, base->band, p.band);
      return std::make_pair(verdict_of_change(c, rules.threshold) == Verdict::regression, c);
    };
    if (s.points.back().value <= 0) continue;
    const auto [worse, change] = judge(s.points.back());
    if (!worse) continue;
    std::size_t step = s.points.size() - 1;
    while (step > window && s.points[step - 1].value > 0 && judge(s.points[step - 1]).first) --step;
    Regression r{&s, *base, &s.points.back(), &s.points[step], change, {}};
    // The software that changed at the step, or between the baseline's last run and the step.
    if (step > 0) r.change_points = software_changes(s.points[step - 1].software, s.points[step].software);
    out.push_back(std::move(r));
  }
  return out;
}

std::string regression_horizon(const std::vector<RunSummary>& runs, const RegressionRules& rules) {
  std::map<std::string, std::vector<const RunSummary*>> by_cluster;
  for (const auto& r : runs) by_cluster[r.cluster].push_back(&r);
  std::optional<std::string> oldest;
  for (const auto& [_, list] : by_cluster) {
    std::size_t window = list.size() - 1;
    if (!rules.since.empty()) {
      window = list.size();
      for (std::size_t i = 0; i < list.size(); ++i)
        if (list[i]->created_utc >= rules.since) {
          window = i;
          break;
        }
      if (window == list.size()) continue;  // nothing since: no series of this cluster is judged
    }
    if (window < rules.baseline_runs) return "";
    const std::string& first = list[window - rules.baseline_runs]->created_utc;
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
