// The fleet section of the HTML report (only for files with fleet data): the outlier hosts, a heatmap
// of each node-pair matrix and of each node's GPU-pair matrix, per-node bars of the intra-node rows,
// the list of outliers and what in the file could not be drawn.
//
// Bounds, so that a 512-node run still gives a page a browser opens: every node-pair matrix is drawn
// (svg_heatmap.h bounds each one); GPU-pair matrices up to kMaxGpuHeatmaps, those with a mark first;
// the rail matrices with an outlier (the others named in a line: rail_heatmaps); per-node bars for the
// rows per_node_rows() picks (each series at 1 GPU and at its largest intra-node
// count), up to kMaxNodeBars. What is left out is said on the page; the text report and the JSON have
// the rest.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/fleet_check.h"
#include "analysis/row_text.h"
#include "analysis/sections/fleet_html.h"
#include "text/svg_chart.h"
#include "analysis/svg_heatmap.h"
#include "text/number_text.h"

namespace gpuscale {
namespace {

constexpr std::size_t kMaxGpuHeatmaps = 64;
constexpr std::size_t kMaxNodeBars = 32;

std::string h(const std::string& s) { return html_escape(s); }

std::string heatmap_of(const FleetMatrix& m, const ResultRow& row, const FleetView& v,
                       std::optional<std::pair<double, double>> range = std::nullopt) {
  const auto marks = matrix_marks(m, row, v);
  Heatmap hm;
  hm.unit = row.unit;
  hm.labels = m.labels;
  for (std::size_t i = 0; i < m.size(); ++i) {
    auto& line = hm.values.emplace_back(m.size());
    for (std::size_t j = 0; j < m.size(); ++j) line[j] = m.pair(i, j);
  }
  hm.suspect = marks.suspect;
  hm.outlier_cells = marks.cells;
  hm.range = range;
  hm.data = {{"benchmark", row.benchmark}, {"kind", m.kind}};
  const auto note = [&](std::string base) { return m.note.empty() ? base : base + "; " + m.note; };
  if (m.kind == "node") {
    hm.title = fmt::format("{}: node pairs ({} nodes)", row_point(row), m.size());
    hm.note = note(m.directed ? "row: sender, column: receiver" : "symmetric: each pair measured once");
  } else if (m.kind == "rail") {
    hm.title = fmt::format("{}: node pairs on rail {} ({} nodes)", row_point(row), m.rail.value_or(0), m.size());
    hm.data.emplace_back("rail", std::to_string(m.rail.value_or(0)));
    hm.note = note(fmt::format("local rank {} of each node with its counterpart; symmetric", m.rail.value_or(0)));
  } else {
    hm.title = fmt::format("{}: GPU pairs ({})", m.hosts.front(), row_point(row));
    hm.data.emplace_back("host", m.hosts.front());
    hm.note = std::string(m.directed ? "row: source GPU, column: destination GPU" : "symmetric: each pair measured once") +
              "; one colour scale for every node";
  }
  return render_heatmap(hm);
}

bool has_marks(const MatrixMarks& m) {
  return !m.cells.empty() || std::find(m.suspect.begin(), m.suspect.end(), true) != m.suspect.end();
}

// "0, 2-7": rail indices, runs joined.
std::string rail_list(const std::vector<int>& rails) {
  std::string out;
  for (std::size_t i = 0; i < rails.size();) {
    std::size_t j = i;
    while (j + 1 < rails.size() && rails[j + 1] == rails[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + (i == j ? std::to_string(rails[i]) : fmt::format("{}-{}", rails[i], rails[j]));
    i = j + 1;
  }
  return out;
}

// The rail matrices: each row's rails with an outlier drawn, the others named in one line. Eight
// heatmaps per row would bury the one that matters, and the node-pair matrix drawn above already shows
// each pair's slowest rail. A file without an outlier analysis has nothing to choose by: every rail.
std::string rail_heatmaps(const FileReport& f) {
  const auto& v = f.fleet;
  std::string drawn, notes;
  std::map<std::size_t, std::vector<int>> plain_of_row;
  for (const auto& m : v.matrices) {
    if (m.kind != "rail") continue;
    const auto& row = f.run.rows[m.row];
    if (!v.analysed || has_marks(matrix_marks(m, row, v)))
      drawn += heatmap_of(m, row, v);
    else
      plain_of_row[m.row].push_back(m.rail.value_or(0));
  }
  for (const auto& [row, rails] : plain_of_row)
    notes += fmt::format("<p class=\"rails\">{}: rail{} {}: no outlier, not drawn (the node-pair matrix above is each "
                         "pair's slowest rail; the text report lists each rail's slowest).</p>\n",
                         h(row_point(f.run.rows[row])), rails.size() > 1 ? "s" : "", rail_list(rails));
  if (drawn.empty() && notes.empty()) return "";
  std::string out = "<h4>Node pairs by rail</h4>\n" + notes;
  if (!drawn.empty()) out += "<div class=\"charts\">\n" + drawn + "</div>\n";
  return out;
}

std::string heatmaps(const FileReport& f) {
  const auto& v = f.fleet;
  std::string nodes;
  std::vector<const FleetMatrix*> gpus_marked, gpus_plain;
  std::map<std::size_t, std::pair<double, double>> range_of_row;  // one colour scale for a row's GPU-pair matrices
  for (const auto& m : v.matrices) {
    const auto& row = f.run.rows[m.row];
    if (m.kind == "node") {
      nodes += heatmap_of(m, row, v);
      continue;
    }
    if (m.kind == "rail") continue;  // rail_heatmaps()
    (has_marks(matrix_marks(m, row, v)) ? gpus_marked : gpus_plain).push_back(&m);
    auto& range = range_of_row.try_emplace(m.row, INFINITY, -INFINITY).first->second;
    for (const auto& line : m.values)
      for (const auto& x : line)
        if (x) range = {std::min(range.first, *x), std::max(range.second, *x)};
  }
  std::string out;
  if (!nodes.empty()) out += "<h4>Node pairs</h4>\n<div class=\"charts\">\n" + nodes + "</div>\n";
  out += rail_heatmaps(f);
  const std::size_t total = gpus_marked.size() + gpus_plain.size();
  if (total == 0) return out;
  out += "<h4>GPU pairs within each node</h4>\n";
  if (total > kMaxGpuHeatmaps)
    out += fmt::format("<p>{} of {} GPU-pair matrices drawn: those with an outlier first, then in file order (the text "
                       "report lists the slowest pairs of all).</p>\n",
                       kMaxGpuHeatmaps, total);
  out += "<div class=\"charts\">\n";
  std::size_t drawn = 0;
  for (const auto* group : {&gpus_marked, &gpus_plain})
    for (const FleetMatrix* m : *group)
      if (drawn++ < kMaxGpuHeatmaps) out += heatmap_of(*m, f.run.rows[m->row], v, range_of_row[m->row]);
  return out + "</div>\n";
}

std::string node_bars(const FileReport& f) {
  const auto& v = f.fleet;
  const auto chosen = per_node_rows(f.run, v);
  if (chosen.empty()) return "";
  std::string out = "<h4>Per node (groups inside one node: 1 GPU and the largest such count; dashed: the median group)</h4>\n";
  if (chosen.size() > kMaxNodeBars) out += fmt::format("<p>The first {} of {} rows drawn.</p>\n", kMaxNodeBars, chosen.size());
  out += "<div class=\"charts\">\n";
  for (std::size_t c = 0; c < chosen.size() && c < kMaxNodeBars; ++c) {
    const auto& r = v.rows[chosen[c]];
    const auto& row = f.run.rows[r.row];
    BarChart b;
    b.kind = "per-node";
    b.title = fmt::format("{}: per node at {} GPU(s)", row_point(row), row.gpu_count);
    b.y_label = row.unit;
    b.data = {{"benchmark", row.benchmark}, {"gpu-count", std::to_string(row.gpu_count)}};
    b.reference = r.median;
    b.reference_label = "median";
    b.highlight = group_marks(r, row, v);
    for (std::size_t g = 0; g < r.groups.size(); ++g) {
      b.labels.push_back(group_label(r, g));
      b.values.push_back(r.groups[g].value);
      b.empty_text.push_back(r.groups[g].status);
    }
    b.note = "red: an outlier group at this count, or a group on a suspect host";
    out += render_bar_chart(b);
  }
  return out + "</div>\n";
}

std::string list(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string num(const std::optional<double>& v) { return v ? figure_text(*v) : "-"; }

std::string outlier_table(const FleetView& v) {
  if (!v.analysed) return "<p>No outlier analysis in this file (analysis.outliers absent).</p>\n";
  if (v.outliers.empty()) return "<p class=\"none\">No outliers.</p>\n";
  std::string out = "<table class=\"outliers\"><tr><th>kind</th><th>hosts</th><th>ranks</th><th>benchmark</th><th>GPUs</th>"
                    "<th>rail</th><th>value</th><th>median</th><th>below</th><th>GPU UUID</th><th>PCI bus id</th><th>reason</th></tr>\n";
  for (const auto& o : v.outliers) {
    std::string ranks;
    for (int r : o.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
    const std::string reason = outlier_reason(o);
    const auto rail = outlier_rail(o);
    out += fmt::format("<tr class=\"bad\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                       "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       h(o.kind), h(list(o.hosts, ", ")), ranks.empty() ? "-" : ranks, h(o.benchmark.empty() ? "-" : o.benchmark),
                       o.gpu_count ? std::to_string(*o.gpu_count) : "-", h(rail.empty() ? "-" : rail), num(o.value), num(o.median),
                       o.deficit ? fmt::format("{:.1f}%", *o.deficit * 100) : "-", h(list(o.uuids, ", ")),
                       h(list(o.pci_bus_ids, ", ")), h(reason));
  }
  return out + "</table>\n";
}

}  // namespace

std::string fleet_html(const FileReport& f) {
  const auto& v = f.fleet;
  if (!v.any()) return "";
  std::string out = "<h3 class=\"fleet\">Fleet</h3>\n";
  if (!v.outlier_hosts.empty())
    out += "<p class=\"suspects\">Outlier hosts (suspects; what a drain list drains): <strong>" + h(list(v.outlier_hosts, ", ")) +
           "</strong></p>\n";
  else if (v.hosts_listed)
    out += "<p class=\"suspects\">No suspect host.</p>\n";
  out += heatmaps(f) + node_bars(f) + "<h4>Outliers</h4>\n" + outlier_table(v);
  if (!v.problems.empty()) {
    out += "<h4>Not shown (data that does not fit the format)</h4>\n<ul class=\"problems\">\n";
    for (const auto& p : v.problems) out += "<li>" + h(p) + "</li>\n";
    out += "</ul>\n";
  }
  return out;
}

}  // namespace gpuscale
