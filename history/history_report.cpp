// The history section of the HTML report (history_report.h), drawn with text/svg_chart.h.
#include "history/history_report.h"

#include <ctime>
#include <map>
#include <set>

#include <fmt/format.h>

#include "text/escape.h"
#include "text/svg_chart.h"
#include "core/error.h"
#include "core/utc_time.h"
#include "history/history_text.h"

namespace gpuscale::history {
namespace {

constexpr std::size_t kMaxCharts = 60;  // a large store: the first charts, and a note saying so

std::string h(const std::string& s) { return html_escape(s); }

// Seconds since the epoch of "YYYY-MM-DDTHH:MM:SSZ" (0 when it is not one).
double epoch_of(const std::string& utc) { return utc_epoch_seconds(utc).value_or(0); }

std::string date_text(double epoch) {
  const std::time_t t = static_cast<std::time_t>(epoch);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%m-%d %H:%M", &tm);
  return buf;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : "; ") + s;
  return out;
}

// One chart per (cluster, benchmark, params): a line per GPU count, the baseline band of its latest
// point dashed, and a point per run where software changed.
std::string charts_html(const std::vector<Series>& rows, const RegressionRules& rules, std::size_t& charts) {
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<const Series*>> groups;
  for (const auto& s : rows) groups[{s.key.cluster, s.key.benchmark, s.key.params}].push_back(&s);
  std::string out;
  for (const auto& [key, list] : groups) {
    if (charts == kMaxCharts) {
      out += fmt::format("<p class=\"note\">{} more charts not drawn (gpuscale history trend shows them).</p>\n",
                         groups.size() - kMaxCharts);
      break;
    }
    double t0 = 0;
    for (const auto* s : list)
      for (const auto& p : s->points) {
        const double t = epoch_of(p.created_utc);
        if (t0 == 0 || t < t0) t0 = t;
      }
    SeriesKey label = list.front()->key;
    label.gpu_count = 0;
    LineChart c;
    c.kind = "history";
    c.title = fmt::format("{} on {}", series_label(label).substr(0, series_label(label).rfind(" @ ")), std::get<0>(key));
    c.x_label = "run date (UTC)";
    c.y_label = list.front()->unit;
    c.data = {{"cluster", std::get<0>(key)}, {"benchmark", std::get<1>(key)}};
    c.x_tick_text = [t0](double x) { return date_text(t0 + x); };
    std::vector<std::string> changes;
    for (const auto* s : list) {
      ChartSeries line{fmt::format("{} GPU{}", s->key.gpu_count, s->key.gpu_count == 1 ? "" : "s"), {}, false};
      ChartSeries marks{fmt::format("software changed ({} GPUs)", s->key.gpu_count), {}, false};
      for (const auto& p : s->points) {
        const double x = epoch_of(p.created_utc) - t0;
        line.points.push_back({x, p.value});
        if (!p.changes.empty()) {
          marks.points.push_back({x, p.value});
          changes.push_back(date_text(t0 + x) + ": " + join(p.changes));
        }
      }
      c.series.push_back(std::move(line));
      if (const auto base = baseline_before(*s, s->points.size() - 1, rules.baseline_runs)) {
        const double x0 = epoch_of(s->points.front().created_utc) - t0, x1 = epoch_of(s->points.back().created_utc) - t0;
        const double lo = base->median * (1 - base->band.down), hi = base->median * (1 + base->band.up);
        c.series.push_back({fmt::format("baseline band {} GPUs", s->key.gpu_count), {{x0, lo}, {x1, lo}}, true});
        c.series.push_back({fmt::format("baseline band {} GPUs", s->key.gpu_count), {{x0, hi}, {x1, hi}}, true});
      }
      if (!marks.points.empty()) c.series.push_back(std::move(marks));
    }
    std::sort(changes.begin(), changes.end());
    changes.erase(std::unique(changes.begin(), changes.end()), changes.end());
    c.note = changes.empty() ? "no software version changed" : "software changed: " + join(changes);
    out += render_line_chart(c);
    ++charts;
  }
  return out;
}

}  // namespace

HistoryReport history_report(HistoryStore& store, const RegressionRules& rules) {
  const auto runs = store.list_runs({});
  if (runs.empty()) throw Error("report --history: the store holds no runs");
  const auto rows = row_series(store.row_points({}));
  auto all = rows;
  RowQuery recent;
  recent.since = regression_horizon(runs, rules);  // the hosts' values the rule can use, not the store's age
  auto hosts = rank_series(store.rank_points(recent), false);
  all.insert(all.end(), hosts.begin(), hosts.end());
  const auto regs = find_regressions(all, rules);
  HistoryReport r;
  r.regressions = regs.size();
  // What changed, run by run: software against the cluster's previous run, regressions starting there.
  std::map<std::string, std::vector<std::string>> starts;
  for (const auto& g : regs) starts[g.changed->run_id].push_back(series_label(g.series->key));
  std::map<std::string, const RunSummary*> previous;
  std::string table = "<table class=\"what-changed\"><tr><th>run</th><th>created (UTC)</th><th>cluster</th>"
                      "<th>software changed</th><th>regressions starting here</th></tr>\n";
  std::string text = "what changed:\n";
  for (const auto& run : runs) {
    const auto prev = previous.find(run.cluster);
    const auto sw = prev == previous.end()
                        ? std::vector<std::string>{}
                        : software_changes(software_versions(prev->second->software), software_versions(run.software));
    previous[run.cluster] = &run;
    const auto& reg = starts[run.id];
    if (sw.empty() && reg.empty()) continue;
    table += fmt::format("<tr class=\"{}\"><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                         reg.empty() ? "" : "bad", h(run.id.substr(0, 12)), h(run.created_utc), h(run.cluster),
                         h(join(sw)), h(join(reg)));
    text += term_text(fmt::format("  {}  {}  {}: {}{}", run.id.substr(0, 12), run.created_utc, run.cluster,
                                  sw.empty() ? "" : "software " + join(sw) + (reg.empty() ? "" : "; "),
                                  reg.empty() ? "" : "worse from here: " + join(reg))) + "\n";
  }
  table += "</table>\n";
  r.text = text + regressions_text(regs, all.size());
  r.html = fmt::format("<section class=\"history\"><h2>History: {} runs</h2>\n"
                       "<p>Regressions: steps in each series' level over the {} runs before {}, each level judged "
                       "against the median of up to {} runs before its step; worse: beyond the noise and {:.0f}%. "
                       "The dashed band: the last point's baseline (the {} runs before it).</p>\n"
                       "<h3>What changed</h3>\n{}<h3>Trends</h3>\n<div class=\"charts\">\n",
                       runs.size(), rules.lookback_runs, rules.since.empty() ? "the latest run" : h(rules.since),
                       rules.baseline_runs, rules.threshold * 100, rules.baseline_runs, table);
  r.html += charts_html(rows, rules, r.charts) + "</div>\n</section>\n";
  return r;
}

}  // namespace gpuscale::history
