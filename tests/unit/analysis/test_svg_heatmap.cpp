// analysis/svg_heatmap: the legend (range and unit, "not measured", the outlier keys), every member
// labelled on both axes, unmeasured cells grey, outlier cells outlined and suspect labels marked,
// escaping, and the size bound of a 512-member matrix (blocks show their lowest pair).
#include <gtest/gtest.h>

#include <random>

#include <fmt/format.h>

#include "analysis/svg_heatmap.h"

namespace gpuscale {
namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

Heatmap random_heatmap(std::mt19937_64& gen, std::size_t m, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  Heatmap h;
  h.title = "pairs.sendrecv: node pairs";
  h.unit = "GB/s";
  for (std::size_t i = 0; i < m; ++i) h.labels.push_back(fmt::format("n{:03}", i));
  h.values.assign(m, std::vector<std::optional<double>>(m));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = i + 1; j < m; ++j) h.values[i][j] = h.values[j][i] = u(gen);
  return h;
}

TEST(SvgHeatmap, LegendLabelsUnmeasuredAndMarks) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 gen(seed);
    const std::size_t m = std::uniform_int_distribution<std::size_t>(3, 40)(gen);
    auto h = random_heatmap(gen, m, 10, 99);
    // One pair not measured besides the diagonal.
    const std::size_t a = std::uniform_int_distribution<std::size_t>(0, m - 2)(gen);
    h.values[a][a + 1] = h.values[a + 1][a] = std::nullopt;
    double lo = 1e9, hi = 0;
    for (const auto& row : h.values)
      for (const auto& v : row)
        if (v) lo = std::min(lo, *v), hi = std::max(hi, *v);
    const std::size_t bad = std::uniform_int_distribution<std::size_t>(0, m - 1)(gen);
    h.suspect.assign(m, false);
    h.suspect[bad] = true;
    h.outlier_cells = {{0, m - 1}, {m - 1, 0}};
    const auto svg = render_heatmap(h);
    EXPECT_EQ(svg.rfind("<svg", 0), 0u);
    EXPECT_NE(svg.find("data-chart=\"heatmap\""), std::string::npos);
    EXPECT_NE(svg.find(fmt::format("data-members=\"{}\"", m)), std::string::npos);
    // The legend: the measured range with its unit, the grey key and the outlier keys.
    EXPECT_NE(svg.find(fmt::format(">{:.3g} GB/s</text>", hi)), std::string::npos) << hi;
    EXPECT_NE(svg.find(fmt::format(">{:.3g} GB/s</text>", lo)), std::string::npos) << lo;
    EXPECT_NE(svg.find(">GB/s</text>"), std::string::npos);
    EXPECT_NE(svg.find(">not measured</text>"), std::string::npos);
    EXPECT_NE(svg.find(">outlier pair</text>"), std::string::npos);
    // Every member labelled on both axes (the suspect with its marker).
    for (std::size_t i = 0; i < m; ++i) {
      const std::string text = (i == bad ? "\xE2\x96\xB6 " : "") + h.labels[i] + "</text>";
      EXPECT_EQ(count(svg, ">" + text), 2u) << h.labels[i];
    }
    EXPECT_EQ(count(svg, "class=\"tick suspect\""), 2u);
    EXPECT_NE(svg.find("class=\"tick suspect\" style=\"fill:#d62728"), std::string::npos);
    // Grey cells: the diagonal, the unmeasured pair both ways, and the legend key.
    EXPECT_EQ(count(svg, "fill=\"#d9d9d9\""), m + 2 + 1);
    EXPECT_EQ(count(svg, "class=\"outlier\""), 2u);
    EXPECT_EQ(count(svg, "<title>"), 1 + m * m);  // a tooltip per cell while the matrix is small
  }
}

TEST(SvgHeatmap, EscapesEveryText) {
  Heatmap h;
  h.title = "t<script>alert(1)</script>";
  h.unit = "GB/s\"><x";
  h.note = "n&<";
  h.labels = {"<b>", "a\"b", "c'd&"};
  h.values = {{std::nullopt, 1.0, 2.0}, {1.0, std::nullopt, 3.0}, {2.0, 3.0, std::nullopt}};
  h.data = {{"benchmark", "\"><script>"}};
  h.suspect = {true, false, false};
  const auto svg = render_heatmap(h);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_EQ(svg.find("<x"), std::string::npos);
  EXPECT_NE(svg.find("&lt;b&gt;"), std::string::npos);
  EXPECT_NE(svg.find("a&quot;b"), std::string::npos);
  EXPECT_NE(svg.find("c&#39;d&amp;"), std::string::npos);
}

TEST(SvgHeatmap, NotSquareDrawsNoData) {
  Heatmap h;
  h.labels = {"a", "b", "c"};
  h.values = {{1.0, 2.0}, {3.0, 4.0}};
  const auto svg = render_heatmap(h);
  EXPECT_NE(svg.find(">no data</text>"), std::string::npos);
  EXPECT_EQ(svg.find("<rect x=\"1"), std::string::npos);
}

TEST(SvgHeatmap, LargeMatricesStayBoundedAndShowTheSlowPair) {
  std::mt19937_64 gen(7);
  const std::size_t m = 512;
  auto h = random_heatmap(gen, m, 50, 60);
  const std::size_t i = std::uniform_int_distribution<std::size_t>(0, m - 1)(gen);
  const std::size_t j = (i + 1 + std::uniform_int_distribution<std::size_t>(0, m - 2)(gen)) % m;
  h.values[i][j] = h.values[j][i] = 5.0;  // one slow link among 130816 pairs
  h.suspect.assign(m, false);
  const std::size_t s = std::uniform_int_distribution<std::size_t>(0, m - 1)(gen);
  h.suspect[s] = true;
  h.outlier_cells = {{i, j}, {j, i}};
  const auto svg = render_heatmap(h);
  EXPECT_LT(svg.size(), 2u << 20);
  const std::size_t side = kHeatmapMaxSide, b = m / side;
  EXPECT_LE(count(svg, "<rect"), side * side + 20);
  EXPECT_NE(svg.find(fmt::format("each cell: the lowest of {} x {} pairs ({} members)", b, b, m)), std::string::npos);
  // The slow pair's blocks take the lowest colour of the scale (its other use: the legend's bottom step).
  EXPECT_EQ(count(svg, "fill=\"#440154\""), (i / b == j / b ? 1u : 2u) + 1u);
  EXPECT_EQ(count(svg, "class=\"outlier\""), i / b == j / b ? 1u : 2u);
  // Labels thinned, the suspect always labelled.
  EXPECT_LT(count(svg, "class=\"tick\""), 2 * side);
  EXPECT_NE(svg.find("\xE2\x96\xB6 " + h.labels[s]), std::string::npos);
  EXPECT_EQ(count(svg, "<title>"), 1u);  // no per-cell tooltips at this size
}

}  // namespace
}  // namespace gpuscale
