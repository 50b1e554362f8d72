#include "analysis/svg_heatmap.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "text/escape.h"
#include "text/svg_chart.h"

namespace gpuscale {
namespace {

constexpr int kTitle = 40;        // title band
constexpr std::size_t kLabelChars = 16;  // axis labels are cut to this many bytes
constexpr int kPlot = 512;        // the matrix is at most this many pixels wide
constexpr int kLegend = 170;      // legend column
constexpr int kLegendHeight = 170;
constexpr int kMinWidth = 520;
constexpr int kNoteBand = 34;
constexpr int kLabelPitch = 11;  // pixels a label needs
constexpr const char* kUnmeasured = "#d9d9d9";
constexpr const char* kWarn = "#d62728";

// Viridis stops (dark = low, yellow = high): perceptually even and readable in grey and by most
// colour-blind readers; red stays free for the outlier marks.
constexpr double kStops[][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};

std::string colour(double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * (std::size(kStops) - 1);
  const auto i = std::min<std::size_t>(static_cast<std::size_t>(t), std::size(kStops) - 2);
  const double f = t - static_cast<double>(i);
  auto c = [&](int k) { return static_cast<int>(std::lround(kStops[i][k] + (kStops[i + 1][k] - kStops[i][k]) * f)); };
  return fmt::format("#{:02x}{:02x}{:02x}", c(0), c(1), c(2));
}

std::string num(double v) { return v >= 100 && v < 1e7 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v); }

bool square(const Heatmap& h) {
  const std::size_t n = h.labels.size();
  return n > 0 && h.values.size() == n &&
         std::all_of(h.values.begin(), h.values.end(), [n](const auto& r) { return r.size() == n; });
}

}  // namespace

std::string render_heatmap(const Heatmap& h) {
  const std::size_t m = square(h) ? h.labels.size() : 0;
  // Blocks of b x b members per drawn cell, so at most kHeatmapMaxSide cells per side.
  const std::size_t b = std::max<std::size_t>(1, (m + kHeatmapMaxSide - 1) / kHeatmapMaxSide);
  const std::size_t side = m ? (m + b - 1) / b : 1;
  const int cell = std::clamp(kPlot / static_cast<int>(side), 2, 28);
  const int plot = cell * static_cast<int>(side);
  // Room for the row labels (left) and the column labels (top): the longest label, marker included.
  std::size_t longest = 4;
  for (const auto& l : h.labels) longest = std::max(longest, std::min(l.size() + 2, kLabelChars));
  const int band = 14 + 6 * static_cast<int>(longest);
  const int x0 = band + 8, y0 = kTitle + band;
  const int width = std::max(x0 + plot + kLegend, kMinWidth), height = y0 + std::max(plot, kLegendHeight) + kNoteBand;

  std::string attrs;
  for (const auto& [k, v] : h.data) attrs += fmt::format(" data-{}=\"{}\"", k, html_escape(v));
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart heatmap\" data-chart=\"heatmap\"{} data-members=\"{}\" "
      "viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\"><title>{}</title>\n"
      "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#fff\"/>\n<text x=\"8\" y=\"20\" class=\"ct\">{}</text>\n",
      attrs, m, width, height, width, height, html_escape(h.title), width, height, html_escape(chart_label(h.title, static_cast<std::size_t>(width - 16) / 8)));
  if (m == 0)
    return out + fmt::format("<text x=\"{}\" y=\"{}\" class=\"tick\">no data</text>\n</svg>\n", x0, y0 + 20);

  double lo = INFINITY, hi = -INFINITY;
  for (const auto& row : h.values)
    for (const auto& v : row)
      if (v) lo = std::min(lo, *v), hi = std::max(hi, *v);
  if (h.range && std::isfinite(h.range->first) && std::isfinite(h.range->second) && h.range->first <= h.range->second)
    lo = std::min(lo, h.range->first), hi = std::max(hi, h.range->second);  // widened, never narrowed below the data
  const bool any = hi >= lo;
  auto t_of = [&](double v) { return hi > lo ? (v - lo) / (hi - lo) : 1.0; };
  std::set<std::pair<std::size_t, std::size_t>> outlined;
  for (const auto& [i, j] : h.outlier_cells)
    if (i < m && j < m) outlined.insert({i / b, j / b});
  auto member_range = [&](std::size_t c) {
    const std::size_t first = c * b, last = std::min(m, first + b) - 1;
    return first == last ? h.labels[first] : fmt::format("{} .. {}", h.labels[first], h.labels[last]);
  };

  // Cells: one per member pair, or the lowest of each block. Tooltips while the matrix is small.
  const bool tips = side <= 64;
  std::string marks;
  for (std::size_t r = 0; r < side; ++r)
    for (std::size_t c = 0; c < side; ++c) {
      std::optional<double> v;
      for (std::size_t i = r * b; i < std::min(m, (r + 1) * b); ++i)
        for (std::size_t j = c * b; j < std::min(m, (c + 1) * b); ++j)
          if (h.values[i][j] && (!v || *h.values[i][j] < *v)) v = h.values[i][j];
      const int x = x0 + cell * static_cast<int>(c), y = y0 + cell * static_cast<int>(r);
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"", x, y, cell, cell,
                         v ? colour(t_of(*v)) : kUnmeasured);
      if (tips)
        out += fmt::format("><title>{} - {}: {}</title></rect>\n", html_escape(member_range(r)), html_escape(member_range(c)),
                           v ? fmt::format("{}{} {}", b > 1 ? "lowest " : "", num(*v), html_escape(h.unit)) : "not measured");
      else
        out += "/>\n";
      if (outlined.count({r, c}))
        marks += fmt::format("<rect class=\"outlier\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" "
                             "stroke=\"{}\" stroke-width=\"2\"/>\n",
                             x + 1.0, y + 1.0, cell - 2.0, cell - 2.0, kWarn);
    }
  out += marks;

  // Axis labels: every `step`-th drawn cell, and every suspect member whatever the step.
  const std::size_t step = std::max<std::size_t>(1, (kLabelPitch + cell - 1) / cell);
  std::vector<bool> suspect_cell(side, false);
  for (std::size_t i = 0; i < m && i < h.suspect.size(); ++i)
    if (h.suspect[i]) suspect_cell[i / b] = true;
  for (std::size_t c = 0; c < side; ++c) {
    if (c % step != 0 && !suspect_cell[c]) continue;
    const bool bad = suspect_cell[c];
    std::string text;
    if (bad && b > 1) {
      for (std::size_t i = c * b; i < std::min(m, (c + 1) * b); ++i)
        if (i < h.suspect.size() && h.suspect[i]) text += (text.empty() ? "" : ",") + h.labels[i];
    } else {
      text = h.labels[c * b];
    }
    text = chart_label((bad ? "\xE2\x96\xB6 " : "") + text, kLabelChars);  // U+25B6: the suspect marker
    const double mid = cell * (static_cast<double>(c) + 0.5);
    const char* cls = bad ? "tick suspect" : "tick";
    // A style attribute: the page's class rules would override a fill attribute.
    const std::string fill = bad ? fmt::format(" style=\"fill:{};font-weight:bold\"", kWarn) : "";
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"{}\"{} text-anchor=\"end\">{}</text>\n", x0 - 4, y0 + mid + 3.5,
                       cls, fill, html_escape(text));
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"{}\"{} text-anchor=\"start\" transform=\"rotate(-90 {:.1f} {})\">{}</text>\n",
                       x0 + mid + 3.5, y0 - 4, cls, fill, x0 + mid + 3.5, y0 - 4, html_escape(text));
  }

  // Legend: the colour scale (high at the top) with its range and unit, then the grey and red keys.
  const int lx = x0 + plot + 24, ly = y0;
  constexpr int kSteps = 10, kStepH = 10;
  out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"lg\">{}</text>\n", lx, ly - 8, html_escape(h.unit));
  for (int s = 0; s < kSteps; ++s)
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"{}\" fill=\"{}\"/>\n", lx, ly + s * kStepH, kStepH,
                       colour(1.0 - static_cast<double>(s) / (kSteps - 1)));
  if (any)
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"lg\">{} {}</text><text x=\"{}\" y=\"{}\" class=\"lg\">{} {}</text>\n",
                       lx + 22, ly + 8, num(hi), html_escape(h.unit), lx + 22, ly + kSteps * kStepH, num(lo), html_escape(h.unit));
  else
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"lg\">no measured pair</text>\n", lx + 22, ly + 8);
  const int ky = ly + kSteps * kStepH + 16;
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" class=\"lg\">not measured</text>\n",
                     lx, ky, kUnmeasured, lx + 22, ky + 9);
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"10\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>"
                     "<text x=\"{}\" y=\"{}\" class=\"lg\">outlier pair</text>\n",
                     lx, ky + 16, kWarn, lx + 22, ky + 25);
  out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"lg\" style=\"fill:{};font-weight:bold\">\xE2\x96\xB6 suspect</text>\n", lx,
                     ky + 41, kWarn);
  std::string note = h.note;
  if (b > 1) note += fmt::format("{}each cell: the lowest of {} x {} pairs ({} members)", note.empty() ? "" : "; ", b, b, m);
  if (!note.empty())
    out += fmt::format("<text x=\"8\" y=\"{}\" class=\"note\">{}</text>\n", height - 10, html_escape(chart_label(note, 160)));
  return out + "</svg>\n";
}

}  // namespace gpuscale
