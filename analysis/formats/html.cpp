// The report as one self-contained HTML page: inline CSS and SVG only, no script, no external
// resource (a Content-Security-Policy forbids loading any), so it opens offline and can be attached
// to a ticket. It opens with the verdict and the fleet's heatmaps, then scaling, then the detail; a
// chart with no data is not drawn (one line says why). Charts (svg_chart.h): scaling efficiency vs GPU count and % of peak per benchmark,
// busbw vs message size per GPU count, per-GPU bars with the median line, and the projection.
#include <map>
#include <set>

#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/report_section.h"
#include "analysis/reporter.h"
#include "analysis/row_text.h"
#include "text/number_text.h"
#include "text/svg_chart.h"
#include "collectives/collective_table.h"
#include "core/stats.h"
#include "core/units.h"
#include "gpuscale_version.h"

namespace gpuscale {
namespace {

std::string h(const std::string& s) { return html_escape(s); }

std::string size_text(double x) { return format_size(static_cast<std::uint64_t>(std::llround(x))); }
std::string count_text(double x) { return fmt::format("{}", std::llround(x)); }

int largest_count(const Series& s) {
  int n = 0;
  for (const ResultRow* r : s.rows) n = std::max(n, r->gpu_count);
  return n;
}

std::string env_section(const FileReport& f) {
  const LoadedResult& run = f.run;
  const auto& d = run.doc;
  std::string out = "<h3>Environment</h3>\n<table class=\"env\">\n";
  for (const auto& [k, v] : environment_summary(run)) out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", h(k), h(v));
  std::string cmd;
  for (const auto& a : d["command_line"]) cmd += (cmd.empty() ? "" : " ") + a.get<std::string>();
  out += fmt::format("<tr><th>command line</th><td><code>{}</code></td></tr>\n</table>\n", h(cmd));
  out += "<details><summary>ranks and devices</summary>\n<table><tr><th>rank</th><th>host</th><th>local rank</th>"
         "<th>device</th><th>index</th><th>memory</th><th>UUID</th><th>PCI bus id</th></tr>\n";
  for (const auto& r : d["ranks"]) {
    const auto& dev = r["device"];
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       r["rank"].get<int>(), h(r["host"].get<std::string>()), r["local_rank"].get<int>(),
                       h(dev["name"].get<std::string>()), dev["index"].get<int>(),
                       dev["memory_bytes"].is_null() ? std::string("-") : format_size(dev["memory_bytes"].get<std::uint64_t>()),
                       h(device_detail(&r, "uuid")),
                       h(device_detail(&r, "pci_bus_id")));
  }
  out += "</table></details>\n<details><summary>environment variables</summary>\n<table>\n";
  for (const auto& [k, v] : d["environment"].items())
    out += fmt::format("<tr><th>{}</th><td><code>{}</code></td></tr>\n", h(k), h(v.get<std::string>()));
  return out + "</table></details>\n";
}

std::string tables_section(const FileReport& f) {
  std::string out = "<h3>Results</h3>\n<div class=\"tables\">\n";
  for (const auto& g : group_rows(f.run.rows)) {
    out += fmt::format("<table class=\"results\"><caption>{} ({})</caption><tr><th>point</th><th>GPUs</th><th>value</th>"
                       "<th>scaling</th><th>% peak</th><th>valid</th></tr>\n",
                       h(g.benchmark), h(g.unit));
    for (const auto& s : g.series)
      for (const ResultRow* r : s.table_rows())
        out += fmt::format("<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                           row_is_problem(*r) ? "bad" : "", h(s.sized ? s.label + " " + format_size(s.largest_size) : s.label),
                           r->gpu_count, value_text(*r), percent_text(r->scaling_efficiency),
                           percent_text(r->fraction_of_peak), h(valid_text(*r)));
    out += "</table>\n";
  }
  return out + "</div>\n";
}

std::string absent_line(const std::string& title, const std::string& why) {
  return "<p class=\"absent\">" + h(title) + ": not drawn, " + h(why) + "</p>\n";
}

// The charts under one heading. A chart with nothing to draw (svg_chart.h) is left out and one line
// says why; a heading with neither charts nor such lines is left out too.
struct ChartGroup {
  std::string charts, absent;
  void add(const LineChart& c, const std::string& why) {
    if (has_lines(c)) charts += render_line_chart(c);
    else absent += absent_line(c.title, why);
  }
  void add(const BarChart& c, const std::string& why) {
    if (has_bars(c)) charts += render_bar_chart(c);
    else absent += absent_line(c.title, why);
  }
  std::string html(const std::string& heading) const {
    if (charts.empty() && absent.empty()) return "";
    return "<h3>" + heading + "</h3>\n" + absent + (charts.empty() ? "" : "<div class=\"charts\">\n" + charts + "</div>\n");
  }
};

std::size_t gpu_counts(const BenchmarkGroup& g) {
  std::set<int> counts;
  for (const auto& s : g.series)
    for (const ResultRow* r : s.rows) counts.insert(r->gpu_count);
  return counts.size();
}

std::string charts_section(const FileReport& f) {
  ChartGroup scaling, busbw, pergpu, peak;
  for (const auto& g : group_rows(f.run.rows)) {
    // Scaling efficiency vs GPU count, one line per series (collectives: the largest size).
    LineChart sc{"scaling", g.benchmark + ": scaling efficiency", "GPUs", "scaling efficiency", "", {{"benchmark", g.benchmark}},
                 true, count_text, true, {}};
    for (const auto& s : g.series) {
      ChartSeries cs{s.sized ? s.label + " " + format_size(s.largest_size) : s.label, {}, false};
      for (const ResultRow* r : s.table_rows())
        if (r->scaling_efficiency) cs.points.emplace_back(r->gpu_count, *r->scaling_efficiency);
      sc.series.push_back(std::move(cs));
    }
    if (parse_collective(g.benchmark)) sc.note = "collectives: busbw / link peak at the largest size";
    if (g.benchmark == "dp-step") sc.note = "weak scaling: throughput / (GPUs x throughput at 1 GPU)";
    scaling.add(sc, gpu_counts(g) < 2 ? "the run measured one GPU count"
                                      : "no point has a scaling efficiency at two or more GPU counts");

    // % of peak at the largest GPU count, one bar per series.
    BarChart pk;
    pk.kind = "peak";
    pk.title = g.benchmark + ": % of peak";
    pk.y_label = "fraction of peak";
    pk.data = {{"benchmark", g.benchmark}};
    pk.y_percent = true;
    for (const auto& s : g.series) {
      const int n = largest_count(s);
      for (const ResultRow* r : s.table_rows())
        if (r->gpu_count == n) {
          pk.labels.push_back(fmt::format("{} @{}", s.label, n));
          pk.values.push_back(r->fraction_of_peak);
          pk.empty_text.push_back(r->status == RowStatus::ok ? "n/a" : valid_text(*r));
        }
    }
    pk.note = "n/a: no expected peak known for that point (never guessed); invalid/failed: no value";
    peak.add(pk, "no point has a % of peak (no expected peak known, or no valid value)");

    for (const auto& s : g.series) {
      // busbw vs message size, one line per GPU count (2 and up: one rank crosses no link).
      if (s.sized && g.scope == "collective") {
        LineChart bw{"busbw", fmt::format("{} {}: busbw vs message size", g.benchmark, s.label), "message size", g.unit, "",
                     {{"benchmark", g.benchmark}, {"series", s.label}}, true, size_text, false, {}};
        std::map<int, ChartSeries> by_n;
        for (const ResultRow* r : s.rows)
          if (r->gpu_count >= 2 && r->aggregate && r->params["size_bytes"].is_number()) {
            auto& cs = by_n[r->gpu_count];
            cs.name = fmt::format("{} GPUs", r->gpu_count);
            cs.points.emplace_back(r->params["size_bytes"].get<double>(), *r->aggregate);
          }
        for (auto& [n, cs] : by_n) bw.series.push_back(std::move(cs));
        busbw.add(bw, "no GPU count of 2 or more measured two or more message sizes");
      }
      // Per-GPU bars at the largest GPU count with the median line; stragglers in red.
      const int n = largest_count(s);
      for (const ResultRow* r : s.table_rows()) {
        if (r->gpu_count != n || r->status != RowStatus::ok) continue;
        BarChart b;
        b.kind = "per-gpu";
        b.title = fmt::format("{} {}: per GPU at {} GPUs", g.benchmark, s.label, n);
        b.y_label = g.unit;
        b.data = {{"benchmark", g.benchmark}, {"series", s.label}};
        b.reference_label = "median";
        std::vector<double> vals;
        for (const auto& rv : r->ranks) {
          b.labels.push_back(fmt::format("rank {} {}:{}", rv.rank, rv.host, rv.device_index));
          b.values.push_back(rv.value);
          bool straggler = false;
          for (const auto& st : f.stragglers) straggler |= st.row == r && st.rank == rv.rank;
          b.highlight.push_back(straggler);
          if (rv.value) vals.push_back(*rv.value);
        }
        if (!vals.empty()) b.reference = median_of(vals);
        b.note = g.scope == "collective" ? "collective: per-rank figure from each rank's own time (stragglers are not named from these)"
                                         : fmt::format("red: more than {:.0f}% below the median", f.straggler_threshold * 100);
        pergpu.add(b, "no rank has a figure");
      }
    }
  }
  return scaling.html("Scaling efficiency vs GPU count") + busbw.html("busbw vs message size") +
         pergpu.html("Per GPU (largest GPU count; median line)") + peak.html("% of peak");
}

// The verdict (analysis/verdict.h), first on the page.
std::string verdict_section(const FileReport& f) {
  const RunVerdict& v = f.verdict;
  const auto word = std::string(verdict_word(v.level));
  std::string out = fmt::format("<div class=\"verdict\" data-verdict=\"{}\">\n<h3>Verdict: <span class=\"{}\">{}</span></h3>\n<ul>\n",
                                word, v.level == VerdictLevel::pass ? "pass" : v.level == VerdictLevel::warn ? "warn" : "fail", word);
  for (const auto& r : v.reasons) out += "<li>" + h(r) + "</li>\n";
  out += "<li>outliers: " + h(v.outliers) + "</li>\n";
  if (!v.power.empty()) out += "<li>power: " + h(v.power) + "</li>\n";
  if (v.drain_known) {
    std::string hosts;
    for (const auto& x : v.drain) hosts += (hosts.empty() ? "" : ", ") + h(x);
    out += "<li>drain list: " + (hosts.empty() ? std::string("empty") : "<strong>" + hosts + "</strong>") + "</li>\n";
  }
  return out + "<li>GPU health: " + h(v.health) + "</li>\n</ul>\n</div>\n";
}

std::string stragglers_section(const FileReport& f) {
  std::string out = fmt::format("<h3>Stragglers</h3>\n<p>Ranks more than {:.0f}% below the median of their point (independent "
                                "work).</p>\n",
                                f.straggler_threshold * 100);
  if (f.stragglers.empty()) return out + "<p class=\"none\">None.</p>\n";
  out += "<table class=\"stragglers\"><tr><th>benchmark</th><th>point</th><th>GPUs</th><th>rank</th><th>host</th><th>GPU</th>"
         "<th>UUID</th><th>PCI bus id</th><th>value</th><th>median</th><th>below</th></tr>\n";
  for (const auto& s : f.stragglers)
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                       "<td>{}</td><td>{:.1f}%</td></tr>\n",
                       h(s.row->benchmark), h(params_label(s.row->params, false)), s.row->gpu_count, s.rank, h(s.host),
                       s.device_index, h(s.uuid), h(s.pci_bus_id), figure_text(s.value), figure_text(s.median), s.deficit * 100);
  return out + "</table>\n";
}

std::string projection_section(const FileReport& f) {
  const Projection& p = f.projection;
  std::string out = "<h3 class=\"projection\">Projection (a model fitted to this run, not a measurement)</h3>\n";
  if (p.fits.empty()) return out + "<p>No collective rows at 2 or more GPUs: nothing to fit.</p>\n";
  out += fmt::format("<p>Alpha-beta model t = &alpha; &times; steps(n) + factor(n) &times; bytes / &beta; (ring algorithm), "
                     "fitted per collective and level; PROJECTED busbw at {} and {} GPUs assumes the {}-GPU level's "
                     "&alpha; and &beta; hold there. Fit error: RMS relative error of the model's time on the measured "
                     "points.</p>\n<table class=\"projection\"><tr><th>collective</th><th>level</th><th>&alpha; (us)</th>"
                     "<th>&beta; (GB/s)</th><th>fit error</th><th>points</th><th>size</th><th>measured at {}</th>"
                     "<th>PROJECTED at {}</th><th>PROJECTED at {}</th></tr>\n",
                     p.targets[0], p.targets[1], p.largest_count, p.largest_count, p.targets[0], p.targets[1]);
  std::string charts;
  for (const auto& c : p.collectives) {
    if (!c.fit.ok) {
      out += fmt::format("<tr><td>{}</td><td>{}</td><td colspan=\"8\">no fit: {}</td></tr>\n", h(c.collective), h(c.topology),
                         h(c.fit.why.empty() ? "no fit at this level" : c.fit.why));
      continue;
    }
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{:.3g}</td><td>{}</td><td>{:.1f}%</td><td>{}</td><td>{}</td><td>{}</td>"
                       "<td>{} GB/s</td><td>{} GB/s</td></tr>\n",
                       h(c.collective), h(c.topology), c.fit.alpha_us, figure_text(c.fit.beta_gbps), c.fit.rms_rel_error * 100,
                       c.fit.points, size_text(c.size_bytes), c.measured_busbw ? figure_text(*c.measured_busbw) + " GB/s" : "-",
                       figure_text(c.predicted_busbw[0]), figure_text(c.predicted_busbw[1]));
    LineChart lc{"projection", fmt::format("PROJECTION: {} ({}) busbw", c.collective, c.topology), "message size", "GB/s",
                 fmt::format("dashed: projected by the fitted model (fit error {:.1f}% RMS), not measured", c.fit.rms_rel_error * 100),
                 {{"benchmark", c.collective}, {"model", "alpha-beta"}}, true, size_text, false, {}};
    std::map<double, std::vector<double>> measured;
    for (const auto& r : f.run.rows)
      if (r.benchmark == c.collective && r.status == RowStatus::ok && r.gpu_count == c.measured_n && r.aggregate &&
          r.params.contains("size_bytes") && r.params["size_bytes"].is_number())
        measured[r.params["size_bytes"].get<double>()].push_back(*r.aggregate);
    ChartSeries ms{fmt::format("measured {} GPUs", c.measured_n), {}, false};
    for (const auto& [size, v] : measured) ms.points.emplace_back(size, median_of(v));
    lc.series.push_back(ms);
    for (std::size_t i = 0; i < c.target_n.size(); ++i) {
      ChartSeries ps{fmt::format("PROJECTED {} GPUs", c.target_n[i]), {}, true};
      for (const auto& [size, v] : measured) ps.points.emplace_back(size, model_busbw(c.fit, c.target_n[i], size));
      lc.series.push_back(ps);
    }
    charts += render_line_chart(lc);
  }
  out += "</table>\n";
  if (p.dp_steps.empty()) out += "<p>dp-step: no dp-step rows in this file, so no training-step projection.</p>\n";
  for (const auto& d : p.dp_steps) {
    if (!d.ok) {
      out += fmt::format("<p>dp-step {}: not projected: {}</p>\n", h(d.series), h(d.why));
      continue;
    }
    out += fmt::format("<p>dp-step {}: compute {} us, overlap hides {} us of all_reduce; fit error {:.1f}% RMS.</p>\n",
                       h(d.series), figure_text(d.compute_us), figure_text(d.hidden_us), d.rms_rel_error * 100);
    LineChart lc{"projection", fmt::format("PROJECTION: dp-step {} efficiency", d.series), "GPUs", "weak-scaling efficiency",
                 fmt::format("dashed: projected (fit error {:.1f}% RMS), not measured", d.rms_rel_error * 100),
                 {{"benchmark", "dp-step"}, {"model", "dp-step"}}, true, count_text, true, {}};
    ChartSeries ms{"measured", {}, false}, ps{"PROJECTED", {}, true};
    for (const auto& m : d.measured) ms.points.emplace_back(m.gpu_count, m.efficiency);
    if (!d.measured.empty()) ps.points.emplace_back(d.measured.back().gpu_count, d.measured.back().efficiency);
    for (const auto& m : d.predicted) ps.points.emplace_back(m.gpu_count, m.efficiency);
    lc.series = {ms, ps};
    charts += render_line_chart(lc);
  }
  return out + "<div class=\"charts\">\n" + charts + "</div>\n";
}

constexpr const char* kStyle = R"(body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.5em}h2{border-bottom:2px solid #ccc;margin-top:2em}h3{margin-top:1.5em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 8px;text-align:left}
table.results td:nth-child(n+2){text-align:right}caption{font-weight:bold;text-align:left}
tr.bad td{background:#fdd}.charts,.tables{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
svg.chart{border:1px solid #ddd}.ct{font-size:13px;font-weight:bold}.tick{font-size:10px;fill:#444}
.al{font-size:11px;fill:#222}.lg{font-size:10px}.note{font-size:10px;fill:#666}
.grid{stroke:#eee}.axis{stroke:#888}h3.projection{color:#8a4b00}code{font-size:12px}
.pass{color:#1a7f37}.warn{color:#9a6700}.fail{color:#cf222e}p.absent{color:#666;margin:.2em 0}tr.projected td{font-style:italic;color:#555})";

}  // namespace

std::string html_page_head(const std::string& title, const std::string& made_from) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n"
      "<title>{}</title>\n<style>{}</style></head>\n<body>\n<h1>{}</h1>\n<p>Made by gpuscale {} from {}.</p>\n",
      h(title), kStyle, h(title), GPUSCALE_VERSION, h(made_from));
}

namespace {

class HtmlReporter final : public Reporter {
 public:
  std::string_view flag() const override { return "--html"; }
  std::string_view help() const override { return "write a self-contained HTML page with charts"; }
  bool may_write_stdout() const override { return false; }  // a page to open in a browser

  std::string render(const std::vector<FileReport>& files, const ReportExtras& extras) const override {
    std::string out = html_page_head("gpuscale report", fmt::format("{} result file(s)", files.size())) + extras.opening.html;
    for (const auto& f : files) out += file_html(f);
    return out + extras.closing.html + "</body></html>\n";
  }

 private:
  static std::string file_html(const FileReport& f) {
    // The verdict and the fleet (its heatmaps) first, then scaling, then the detail.
    const DocumentPart sections[] = {
        verdict_section,
        fleet_section().html,
        burn_section().html,
        charts_section,
        stragglers_section,
        projection_section,
        training_section().html,
        tables_section,
        env_section,
    };
    std::string out = fmt::format("<section class=\"run\"><h2>{} &mdash; {}</h2>\n", h(f.run.cluster), h(f.run.path));
    for (const DocumentPart section : sections) out += section(f);
    return out + "</section>\n";
  }
};

}  // namespace

const Reporter& html_format() {
  static const HtmlReporter html;
  return html;
}

}  // namespace gpuscale
