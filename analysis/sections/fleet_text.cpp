// The fleet section in terminal text and Markdown: the outlier hosts (what a drain list drains), the
// outliers, then the slowest members of each pair matrix and the slowest groups of each intra-node row,
// slowest first, with the median they are set against. Both kinds render one digest, so they always say
// the same; every string from the file is escaped where it is written. The HTML is fleet_html.cpp's.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/noise.h"
#include "analysis/fleet_check.h"
#include "analysis/report_section.h"
#include "analysis/row_text.h"
#include "analysis/sections/fleet_html.h"
#include "core/stats.h"
#include "text/number_text.h"

namespace gpuscale {
namespace {

constexpr std::size_t kLowest = 5;  // members, pairs and groups listed per line

struct DigestLine {
  std::string what;  // "nodes", "pairs", "GPUs", "groups"
  std::vector<FleetRanked> items;  // against the block's median
};

struct DigestBlock {
  std::string title;  // "pairs.sendrecv 256M: node pairs, 8 nodes, 28 of 28 pairs measured"
  std::optional<double> median;
  std::string unit;
  std::vector<DigestLine> lines;
};

std::size_t measured_pairs(const FleetMatrix& m, std::size_t& total) {
  std::size_t n = 0;
  total = 0;
  for (std::size_t i = 0; i < m.size(); ++i)
    for (std::size_t j = m.directed ? 0 : i + 1; j < m.size(); ++j)
      if (i != j) {
        ++total;
        n += m.pair(i, j) ? 1 : 0;
      }
  return n;
}

std::vector<FleetRanked> merged(std::vector<FleetRanked> all) {
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.value < b.value; });
  if (all.size() > kLowest) all.resize(kLowest);
  return all;
}

// The kLowest furthest below their own median (the rails' medians may differ).
std::vector<FleetRanked> furthest_below(std::vector<FleetRanked> all) {
  const auto ratio = [](const FleetRanked& e) { return e.median > 0 ? e.value / e.median : 1.0; };
  std::stable_sort(all.begin(), all.end(), [&](const auto& a, const auto& b) { return ratio(a) < ratio(b); });
  if (all.size() > kLowest) all.resize(kLowest);
  return all;
}

std::vector<DigestBlock> digest(const FileReport& f) {
  const auto& v = f.fleet;
  const auto& rows = f.run.rows;
  std::vector<DigestBlock> out;
  std::map<std::size_t, std::vector<const FleetMatrix*>> gpu_of_row, rails_of_row;  // pooled per row
  for (const auto& m : v.matrices) {
    if (m.kind == "gpu" || m.kind == "rail") {
      (m.kind == "gpu" ? gpu_of_row : rails_of_row)[m.row].push_back(&m);
      continue;
    }
    std::size_t total = 0;
    const std::size_t n = measured_pairs(m, total);
    out.push_back({fmt::format("{}: node pairs, {} nodes, {} of {} pairs measured{}", row_point(rows[m.row]), m.size(), n, total,
                               m.note.empty() ? "" : " (" + m.note + ")"),
                   matrix_median(m), rows[m.row].unit,
                   {{"nodes", lowest_members(m, kLowest)}, {"pairs", lowest_pairs(m, kLowest)}}});
  }
  // The rails of a row in one block (8 rails would be 16 lines): each node and pair on a rail against
  // its own rail's median, the furthest below first, labelled with the rail.
  for (const auto& [row, ms] : rails_of_row) {
    std::vector<FleetRanked> nodes, pairs;
    std::string notes;
    for (const FleetMatrix* m : ms) {
      if (!m->note.empty()) notes += "; " + m->note;
      const auto prefix = fmt::format("rail {}: ", m->rail.value_or(0));
      for (auto e : lowest_members(*m, m->size())) nodes.push_back({prefix + e.label, e.value, e.median});
      for (auto e : lowest_pairs(*m, kLowest, prefix)) pairs.push_back(e);
    }
    out.push_back({fmt::format("{}: node pairs by rail, {} rails{}", row_point(rows[row]), ms.size(), notes), std::nullopt,
                   rows[row].unit, {{"nodes", furthest_below(nodes)}, {"pairs", furthest_below(pairs)}}});
  }
  // GPU pairs of every node of a row against the median of all of them: a node of 2 GPUs has one
  // pair, and its own median would say nothing.
  for (const auto& [row, ms] : gpu_of_row) {
    std::vector<FleetRanked> gpus, pairs;
    std::vector<double> all;
    for (const FleetMatrix* m : ms) {
      for (auto e : lowest_members(*m, m->size())) gpus.push_back({m->hosts.front() + " " + e.label, e.value, 0});
      for (auto e : lowest_pairs(*m, m->size() * m->size(), m->hosts.front() + " ")) {
        pairs.push_back(e);
        all.push_back(e.value);
      }
    }
    const double med = median_of(all);
    for (auto* list : {&gpus, &pairs})
      for (auto& e : *list) e.median = med;
    out.push_back({fmt::format("{}: GPU pairs within {} node(s)", row_point(rows[row]), ms.size()),
                   all.empty() ? std::nullopt : std::optional<double>(med), rows[row].unit,
                   {{"GPUs", merged(gpus)}, {"pairs", merged(pairs)}}});
  }
  for (std::size_t i : per_node_rows(f.run, v)) {
    const auto& r = v.rows[i];
    const auto& row = rows[r.row];
    out.push_back({fmt::format("{} @ {} GPU(s): {} groups inside one node each", row_point(row), row.gpu_count, r.groups.size()),
                   r.median, row.unit, {{"groups", lowest_groups(r, kLowest, unit_direction(row.unit) == Better::lower)}}});
  }
  return out;
}

std::string item_text(const FleetRanked& e) {
  const double change = e.median > 0 ? e.value / e.median - 1 : 0;
  return fmt::format("{} {} ({:+.1f}%)", e.label, figure_text(e.value), change * 100);
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string ints(const std::vector<int>& v) {
  std::vector<std::string> parts;
  for (int i : v) parts.push_back(std::to_string(i));
  return parts.empty() ? "-" : join(parts, ",");
}

std::string figure(const std::optional<double>& v) { return v ? figure_text(*v) : "-"; }
std::string below(const std::optional<double>& d) { return d ? fmt::format("{:.1f}%", *d * 100) : "-"; }

std::string headline(const FleetView& v) {
  if (!v.outlier_hosts.empty()) return "outlier hosts (suspects to drain): " + join(v.outlier_hosts, " ");
  if (!v.analysed) return "no outlier analysis in this file";
  return v.outliers.empty() ? "no outliers" : "no suspect host (outliers below)";
}

std::string fleet_text(const FileReport& f, const TextStyle& style) {
  const auto& v = f.fleet;
  if (!v.any()) return "";
  std::string out = "\nfleet: " + term_text(headline(v)) + "\n";
  if (!v.outliers.empty()) {
    out += fmt::format("  {} outlier(s):\n", v.outliers.size());
    for (const auto& o : v.outliers) out += "    " + term_text(outlier_line(o, f.run.rows)) + "\n";
  }
  const auto blocks = digest(f);
  if (!blocks.empty()) out += "  slowest first (change against the median):\n";
  for (const auto& b : blocks) {
    out += "    " + term_text(b.title) + (b.median ? fmt::format("; median {} {}", figure_text(*b.median), term_text(b.unit)) : "") + "\n";
    for (const auto& l : b.lines) {
      std::vector<std::string> items;
      for (const auto& e : l.items) items.push_back(item_text(e));
      out += fmt::format("      {}: {}\n", l.what, items.empty() ? "none measured" : term_text(join(items, ", ")));
    }
  }
  for (const auto& p : v.problems) out += "  not shown: " + term_text(p) + "\n";
  return fit_lines(out, style.width);
}

std::string fleet_markdown(const FileReport& f) {
  const auto& v = f.fleet;
  if (!v.any()) return "";
  auto md = [](const std::string& s) { return markdown_escape(s); };
  std::string out = "\n### Fleet\n\n" + md(headline(v)) + "\n";
  if (!v.outliers.empty()) {
    out += "\n| kind | hosts | benchmark | GPUs | rail | ranks | value | median | below | reason |\n"
           "|---|---|---|---:|---|---|---:|---:|---:|---|\n";
    for (const auto& o : v.outliers) {
      const auto rail = outlier_rail(o);
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", md(o.kind), md(join(o.hosts, ", ")),
                         md(o.benchmark.empty() ? "-" : o.benchmark), o.gpu_count ? std::to_string(*o.gpu_count) : "-",
                         md(rail.empty() ? "-" : rail), ints(o.ranks), figure(o.value), figure(o.median), below(o.deficit),
                         md(outlier_reason(o)));
    }
  }
  const auto blocks = digest(f);
  if (!blocks.empty()) out += "\nSlowest first (change against the median):\n\n";
  for (const auto& b : blocks) {
    out += "- " + md(b.title) + (b.median ? fmt::format("; median {} {}", figure_text(*b.median), md(b.unit)) : "") + "\n";
    for (const auto& l : b.lines) {
      std::vector<std::string> items;
      for (const auto& e : l.items) items.push_back(md(item_text(e)));
      out += fmt::format("  - {}: {}\n", l.what, items.empty() ? "none measured" : join(items, ", "));
    }
  }
  if (!v.problems.empty()) out += "\nNot shown (data that does not fit the format):\n\n";
  for (const auto& p : v.problems) out += "- " + md(p) + "\n";
  return out;
}

}  // namespace

const ReportSection& fleet_section() {
  static const ReportSection fleet{fleet_text, fleet_markdown, fleet_html};
  return fleet;
}

}  // namespace gpuscale
