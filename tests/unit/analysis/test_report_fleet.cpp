// The fleet section of gpuscale report (terminal, Markdown, HTML) from seeded random fleet documents
// with a planted slow host: the slowest host first with the median beside it, "no outliers" without
// one, heatmaps with the suspect marked and per-node bars, nothing for old files, and escaping.
#include <gtest/gtest.h>

#include <sstream>

#include <random>

#include <fmt/format.h>

#include "analysis/reporter.h"
#include "text/number_text.h"
#include "fleet_fixtures.h"

namespace gpuscale {
namespace {

using nlohmann::json;
using testing::FleetSpec;

FileReport report_of(const json& doc) { return make_file_report(result_from_json("fleet.json", doc), 0.1); }

std::vector<FileReport> files_of(const json& doc) {
  std::vector<FileReport> files;
  files.push_back(report_of(doc));
  return files;
}

std::string text_of(const std::vector<FileReport>& files, std::size_t width = kDefaultColumns) {
  return terminal_reporter(width)->render(files, {});
}
std::string markdown_of(const std::vector<FileReport>& files) { return report_format("--markdown").render(files, {}); }
std::string html_of(const std::vector<FileReport>& files) { return report_format("--html").render(files, {}); }

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

// The line of `text` that starts (after indentation) with `head`, below the first line containing `after`.
std::string line_after(const std::string& text, const std::string& after, const std::string& head) {
  auto p = text.find(after);
  if (p == std::string::npos) return "";
  p = text.find("\n" , p);
  while (p != std::string::npos) {
    const auto end = text.find('\n', p + 1);
    const auto line = text.substr(p + 1, end == std::string::npos ? std::string::npos : end - p - 1);
    const auto first = line.find_first_not_of(" -");
    if (first != std::string::npos && line.compare(first, head.size(), head) == 0) return line;
    p = end;
  }
  return "";
}

TEST(ReportFleet, TerminalListsTheSlowestHostFirstWithTheMedian) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 gen(seed);
    FleetSpec s;
    s.nodes = std::uniform_int_distribution<int>(6, 16)(gen);
    s.slow = std::uniform_int_distribution<int>(0, s.nodes - 1)(gen);
    s.factor = std::uniform_real_distribution<double>(0.3, 0.7)(gen);
    std::vector<std::string> hosts;
    const auto files = files_of(testing::fleet_doc(s, gen, &hosts));
    const auto& f = files[0];
    const auto& slow = hosts[static_cast<std::size_t>(s.slow)];
    const auto text = text_of(files, 0);  // --wide: whole lines (the width is tested below)
    {  // at 80 columns every line fits, but the nccl-tests tables' (a title "# gpuscale ..." to a blank line)
      std::istringstream in(text_of(files, 80));
      bool table = false;
      for (std::string l; std::getline(in, l);) {
        table = l.rfind("# gpuscale ", 0) == 0 || (table && !l.empty());
        if (!table) {
          EXPECT_LE(l.size(), 80u) << l;
        }
      }
    }
    EXPECT_NE(text.find("\nfleet: outlier hosts (suspects to drain): " + slow + "\n"), std::string::npos) << text;
    // The node-pair matrix: its median, and the slow host first among the nodes and in the pairs.
    const auto& m = f.fleet.matrices[0];
    const auto med = *matrix_median(m);
    EXPECT_NE(text.find(fmt::format("node pairs, {} nodes, {} of {} pairs measured; median {} GB/s", s.nodes,
                                    s.nodes * (s.nodes - 1) / 2, s.nodes * (s.nodes - 1) / 2, figure_text(med))),
              std::string::npos)
        << text;
    const auto nodes = line_after(text, "node pairs,", "nodes: ");
    EXPECT_EQ(nodes.find("nodes: " + slow + " "), 6u) << nodes;
    const auto members = lowest_members(m, 1);
    const auto member = fmt::format("{} ({:+.1f}%)", figure_text(members[0].value), (members[0].value / med - 1) * 100);
    EXPECT_NE(nodes.find(member), std::string::npos) << nodes;
    EXPECT_NE(line_after(text, "node pairs,", "pairs: ").find(slow), std::string::npos);
    // Both intra-node rows: the slow host's groups first.
    const auto at2 = line_after(text, "@ 2 GPU(s): ", "groups: ");
    EXPECT_EQ(at2.find("groups: " + slow + " "), 6u) << at2;
    EXPECT_EQ(line_after(text, "@ 1 GPU(s): ", "groups: ").find("groups: " + slow + " r"), 6u);
  }
}

TEST(ReportFleet, NoOutliersSaysSo) {
  std::mt19937_64 gen(3);
  const auto clean = files_of(testing::fleet_doc(FleetSpec{}, gen));
  ASSERT_TRUE(clean[0].fleet.outliers.empty());
  EXPECT_NE(text_of(clean).find("\nfleet: no outliers\n"), std::string::npos);
  std::vector<FileReport> files;
  files.push_back(report_of(testing::fleet_doc(FleetSpec{}, gen)));
  EXPECT_NE(markdown_of(files).find("### Fleet\n\nno outliers\n"), std::string::npos);
  EXPECT_NE(html_of(files).find("<p class=\"none\">No outliers.</p>"), std::string::npos);
}

TEST(ReportFleet, OldFilesHaveNoFleetSection) {
  std::vector<FileReport> files;
  files.push_back(make_file_report(
      testing::loaded({testing::row_json("stream.triad", "independent", {{"dtype", "fp64"}}, 2, {100, 101})}), 0.1));
  EXPECT_EQ(text_of(files).find("fleet"), std::string::npos);
  EXPECT_EQ(markdown_of(files).find("Fleet"), std::string::npos);
  EXPECT_EQ(html_of(files).find("Fleet"), std::string::npos);
  EXPECT_EQ(html_of(files).find("heatmap"), std::string::npos);
}

TEST(ReportFleet, HtmlHeatmapsAndPerNodeBarsMarkTheSuspect) {
  std::mt19937_64 gen(11);
  FleetSpec s;
  s.nodes = 10;
  s.slow = std::uniform_int_distribution<int>(0, s.nodes - 1)(gen);
  std::vector<std::string> hosts;
  std::vector<FileReport> files;
  files.push_back(report_of(testing::fleet_doc(s, gen, &hosts)));
  const auto& slow = hosts[static_cast<std::size_t>(s.slow)];
  const auto html = html_of(files);
  EXPECT_NE(html.find("<h3 class=\"fleet\">Fleet</h3>"), std::string::npos);
  EXPECT_NE(html.find("what a drain list drains): <strong>" + slow + "</strong>"), std::string::npos);
  EXPECT_EQ(count(html, "data-chart=\"heatmap\""), 1u + static_cast<std::size_t>(s.nodes));
  EXPECT_EQ(count(html, "data-chart=\"heatmap\" data-benchmark=\"pairs.sendrecv\" data-kind=\"node\""), 1u);
  // The node heatmap marks the slow host on both axes; the GPU heatmaps mark nothing (no gpu outlier).
  EXPECT_EQ(count(html, "class=\"tick suspect\""), 2u);
  EXPECT_EQ(count(html, "\xE2\x96\xB6 " + slow + "</text>"), 2u);
  for (const auto& h : hosts) EXPECT_GE(count(html, ">" + h + "</text>") + count(html, "\xE2\x96\xB6 " + h + "</text>"), 2u) << h;
  EXPECT_EQ(count(html, "data-chart=\"per-node\""), 2u);
  // Per-node bars: the slow host's groups red (one at 2 GPUs, two at 1 GPU).
  EXPECT_EQ(count(html, "class=\"bar straggler\""), 3u);
  EXPECT_NE(html.find("<table class=\"outliers\">"), std::string::npos);
  EXPECT_NE(html.find("<tr class=\"bad\"><td>node</td><td>" + slow + "</td>"), std::string::npos);
}

// The charts (<svg>...</svg>) of a page, in order.
std::vector<std::string> svgs(const std::string& html) {
  std::vector<std::string> out;
  for (auto p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 4))
    out.push_back(html.substr(p, html.find("</svg>", p) - p));
  return out;
}

// Done-when of issue 23: a fleet-only run's HTML report (only the pair benchmarks: measured once, at
// the whole job) opens with the verdict and the heatmaps, and draws no empty chart.
TEST(ReportFleet, FleetOnlyHtmlOpensWithTheVerdictAndTheHeatmapsAndNoEmptyChart) {
  std::mt19937_64 gen(23);
  FleetSpec s;
  s.nodes = 6;
  s.slow = 2;
  std::vector<std::string> hosts;
  auto doc = testing::fleet_doc(s, gen, &hosts);
  json rows = json::array();
  for (const auto& r : doc["results"])
    if (r["benchmark"] != "stream.triad") rows.push_back(r);
  ASSERT_EQ(rows.size(), 2u);  // pairs.sendrecv and gpu_pairs.sendrecv
  doc["results"] = rows;
  doc = testing_doc::agreeing(doc);
  json outliers = json::array();
  for (const auto& o : doc["analysis"]["outliers"])
    if (o["benchmark"] != "stream.triad") outliers.push_back(o);
  ASSERT_FALSE(outliers.empty());  // the slow host's node outlier
  doc["analysis"]["outliers"] = outliers;
  std::vector<FileReport> files;
  files.push_back(report_of(doc));
  const auto html = html_of(files);

  // The verdict comes first: FAIL (an outlier), naming the host to drain.
  const auto verdict = html.find("<div class=\"verdict\" data-verdict=\"FAIL\">");
  ASSERT_NE(verdict, std::string::npos);
  const auto charts = svgs(html);
  ASSERT_FALSE(charts.empty());
  EXPECT_LT(verdict, html.find("<svg"));
  EXPECT_LT(verdict, html.find("<h3>Environment</h3>"));
  EXPECT_NE(html.find("<li>drain list: <strong>" + hosts[2] + "</strong></li>", verdict), std::string::npos);
  // Then the heatmaps: every chart before the first other one is a heatmap, and there are some.
  EXPECT_NE(charts.front().find("data-chart=\"heatmap\""), std::string::npos);
  // No chart without data: a line chart has a line, a bar chart a bar, a heatmap cells.
  for (const auto& c : charts) {
    EXPECT_EQ(c.find(">no data</text>"), std::string::npos) << c.substr(0, 200);
    if (c.find("data-chart=\"heatmap\"") != std::string::npos) continue;
    EXPECT_TRUE(c.find("<polyline") != std::string::npos || c.find("class=\"bar") != std::string::npos) << c.substr(0, 200);
  }
  // The charts not drawn say why, in one line each: one GPU count, so no scaling efficiency.
  EXPECT_EQ(count(html, "data-chart=\"scaling\""), 0u);
  EXPECT_NE(html.find("<p class=\"absent\">pairs.sendrecv: scaling efficiency: not drawn, the run measured one GPU count</p>"),
            std::string::npos);
  EXPECT_EQ(count(html, "class=\"absent\""), count(html, ": not drawn, "));
}

TEST(ReportFleet, StringsFromTheFileAreEscaped) {
  std::mt19937_64 gen(5);
  FleetSpec s;
  s.slow = 1;
  auto doc = testing::fleet_doc(s, gen);
  const std::string evil = "h\x1b[31m<b>|*_";
  doc["analysis"]["outliers"].push_back(testing::outlier_entry("pair", {evil, "x"}, {}, "pairs.sendrecv", 1, 2));
  doc["analysis"]["outlier_hosts"].push_back(evil);
  doc["results"][2]["matrices"][0]["labels"][0] = evil;
  std::vector<FileReport> files;  // hosts the file does not have: read as --lenient reads it
  files.push_back(make_file_report(result_from_json("fleet.json", doc, Contradictions::report), 0.1));
  const auto text = text_of(files);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("h?[31m<b>"), std::string::npos);
  const auto md = markdown_of(files);
  EXPECT_EQ(md.find("<b>"), std::string::npos);
  EXPECT_NE(md.find("&lt;b&gt;\\|\\*\\_"), std::string::npos);
  const auto html = html_of(files);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_EQ(html.find('\x1b'), std::string::npos);
}

// The sendrecv measured rail by rail (8 nodes of 4 GPUs), host 3's rail 1 at a fifth: a slow NIC.
json rail_doc(std::mt19937_64& gen, std::vector<std::string>& hosts) {
  FleetSpec s;
  s.gpus_per_node = 4;
  s.slow = 3;
  s.factor = 0.2;
  s.rails = true;
  s.slow_rail = 1;
  s.nics = true;
  return testing::fleet_doc(s, gen, &hosts);
}

TEST(ReportFleet, HtmlDrawsTheNodeMatrixThenOnlyTheRailWithAnOutlier) {
  std::mt19937_64 gen(71);
  std::vector<std::string> hosts;
  std::vector<FileReport> files;
  files.push_back(report_of(rail_doc(gen, hosts)));
  const auto html = html_of(files);
  const auto node = html.find("data-kind=\"node\"");
  const auto rail = html.find("data-kind=\"rail\" data-rail=\"1\"");
  ASSERT_NE(node, std::string::npos);
  ASSERT_NE(rail, std::string::npos);
  EXPECT_LT(node, rail);
  EXPECT_EQ(count(html, "data-kind=\"rail\""), 1u);  // rails 0, 2 and 3 measured nothing below the noise
  EXPECT_NE(html.find("rails 0, 2-3: no outlier, not drawn"), std::string::npos);
  EXPECT_NE(html.find("node pairs on rail 1 (8 nodes)"), std::string::npos);
  const auto svg = html.substr(rail, html.find("</svg>", rail) - rail);
  EXPECT_EQ(count(svg, "\xE2\x96\xB6 " + hosts[3] + "</text>"), 2u);  // marked on both axes of its rail
  EXPECT_NE(html.find("<td>rail 1 (NIC mlx5_1 port 1)</td>"), std::string::npos);
  // A file without the analysis has nothing to choose by: every rail is drawn.
  auto bare = rail_doc(gen, hosts);
  bare.erase("analysis");
  std::vector<FileReport> plain;
  plain.push_back(report_of(bare));
  EXPECT_EQ(count(html_of(plain), "data-kind=\"rail\""), 4u);
}

TEST(ReportFleet, TextPutsTheRailsInOneBlockTheSlowRailFirst) {
  std::mt19937_64 gen(72);
  std::vector<std::string> hosts;
  std::vector<FileReport> files;
  files.push_back(report_of(rail_doc(gen, hosts)));
  const auto text = text_of(files, 0);
  EXPECT_EQ(count(text, "node pairs by rail, 4 rails"), 1u) << text;
  const auto nodes = line_after(text, "node pairs by rail", "nodes:");
  EXPECT_EQ(nodes.find("nodes: rail 1: " + hosts[3] + " "), nodes.find_first_not_of(' ')) << nodes;
  EXPECT_NE(text.find("node pairs, 8 nodes, 28 of 28 pairs measured (each pair's slowest rail)"), std::string::npos) << text;
  EXPECT_NE(text.find("rail 1 (NIC mlx5_1 port 1)"), std::string::npos) << text;
  const auto md = markdown_of(files);
  EXPECT_NE(md.find("| rail 1 (NIC mlx5\\_1 port 1) |"), std::string::npos) << md;  // Markdown-escaped
}

}  // namespace
}  // namespace gpuscale
