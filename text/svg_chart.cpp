#include "text/svg_chart.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "text/escape.h"

namespace gpuscale {
namespace {

constexpr double kW = 660, kH = 340, kLeft = 64, kRight = kW - 180, kTop = 34, kBottom = 262;
constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
                                   "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#d62728"};
constexpr const char* kWarn = "#d62728";

double nice_max(double v) {
  if (!(v > 0)) return 1;
  const double e = std::pow(10, std::floor(std::log10(v)));
  const double f = v / e;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * e;
}

std::string y_text(double v, bool percent) {
  if (percent) return fmt::format("{:.0f}%", v * 100);
  return v >= 100 && v < 1e7 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}

std::string open_svg(const std::string& kind, const std::string& title,
                     const std::vector<std::pair<std::string, std::string>>& data) {
  std::string attrs;
  for (const auto& [k, v] : data) attrs += fmt::format(" data-{}=\"{}\"", k, html_escape(v));
  return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"{}\"{} viewBox=\"0 0 {} {}\" "
                     "width=\"{}\" height=\"{}\" role=\"img\"><title>{}</title>\n"
                     "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#fff\"/>\n"
                     "<text x=\"{}\" y=\"20\" class=\"ct\">{}</text>\n",
                     html_escape(kind), attrs, kW, kH, kW, kH, html_escape(title), kW, kH, kLeft,
                     html_escape(chart_label(title, 72)));
}

// Horizontal grid, y ticks and the axis labels.
std::string y_axis(double ymax, bool percent, const std::string& y_label) {
  std::string out;
  for (int i = 0; i <= 5; ++i) {
    const double v = ymax * i / 5;
    const double y = kBottom - (kBottom - kTop) * i / 5;
    out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"grid\"/>"
                       "<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{}</text>\n",
                       kLeft, y, kRight, y, kLeft - 6, y + 4, y_text(v, percent));
  }
  out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"axis\"/><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" class=\"axis\"/>\n",
                     kLeft, kTop, kLeft, kBottom, kLeft, kBottom, kRight, kBottom);
  out += fmt::format("<text x=\"14\" y=\"{:.1f}\" class=\"al\" transform=\"rotate(-90 14 {:.1f})\" text-anchor=\"middle\">{}</text>\n",
                     (kTop + kBottom) / 2, (kTop + kBottom) / 2, html_escape(y_label));
  return out;
}

std::string note_text(const std::string& note) {
  return note.empty() ? "" : fmt::format("<text x=\"{}\" y=\"{}\" class=\"note\">{}</text>\n", kLeft, kH - 6, html_escape(note));
}

// Bar i of a stacked chart: its parts from the axis up, each with its figure in the tooltip.
std::string stacked_bar(const BarChart& c, std::size_t i, double x, double width, double ymax, const std::string& label) {
  std::string out;
  double base = 0;
  const auto& parts = i < c.parts_of.size() ? c.parts_of[i] : std::vector<double>{};
  for (std::size_t p = 0; p < parts.size() && p < c.parts.size(); ++p) {
    if (!(parts[p] > 0)) continue;
    const double y0 = kBottom - (kBottom - kTop) * std::clamp(base / ymax, 0.0, 1.0);
    base += parts[p];
    const double y1 = kBottom - (kBottom - kTop) * std::clamp(base / ymax, 0.0, 1.0);
    out += fmt::format("<rect class=\"bar part\" data-part=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                       "height=\"{:.1f}\" fill=\"{}\"><title>{} {}: {}</title></rect>\n",
                       html_escape(c.parts[p]), x, y1, width, y0 - y1, kColors[p % std::size(kColors)], html_escape(label),
                       html_escape(c.parts[p]), y_text(parts[p], c.y_percent));
  }
  return out;
}

}  // namespace

std::string chart_label(const std::string& s, std::size_t n) {
  if (s.size() <= n) return s;
  std::size_t cut = n - 1;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "~";
}

bool has_lines(const LineChart& c) {
  for (const auto& s : c.series) {
    std::size_t n = 0;
    for (const auto& p : s.points) n += !c.log2_x || p.first > 0;
    if (n >= 2) return true;
  }
  return false;
}

bool has_bars(const BarChart& c) {
  return std::any_of(c.values.begin(), c.values.end(), [](const std::optional<double>& v) { return v.has_value(); });
}

std::string render_line_chart(const LineChart& c) {
  std::string out = open_svg(c.kind, c.title, c.data);
  double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
  for (const auto& s : c.series)
    for (const auto& [x, y] : s.points) {
      if (c.log2_x && !(x > 0)) continue;
      xmin = std::min(xmin, x);
      xmax = std::max(xmax, x);
      ymax = std::max(ymax, y);
    }
  if (!(xmax >= xmin)) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"tick\">no data</text>\n", kLeft + 20, (kTop + kBottom) / 2);
    return out + note_text(c.note) + "</svg>\n";
  }
  ymax = nice_max(ymax * 1.05);
  auto fx = [&](double x) { return c.log2_x ? std::log2(x) : x; };
  double lo = c.log2_x ? std::floor(fx(xmin)) : 0, hi = c.log2_x ? std::ceil(fx(xmax)) : nice_max(xmax);
  if (hi <= lo) hi = lo + 1;
  auto px = [&](double x) { return kLeft + 10 + (kRight - kLeft - 20) * (fx(x) - lo) / (hi - lo); };
  auto py = [&](double y) { return kBottom - (kBottom - kTop) * std::clamp(y / ymax, 0.0, 1.05); };
  out += y_axis(ymax, c.y_percent, c.y_label);
  auto tick_text = [&](double x) { return c.x_tick_text ? c.x_tick_text(x) : fmt::format("{:g}", x); };
  const int nt = static_cast<int>(hi - lo);
  const int step = c.log2_x ? std::max(1, (nt + 9) / 10) : 1;
  for (int i = 0; i <= (c.log2_x ? nt : 5); i += step) {
    const double x = c.log2_x ? std::exp2(lo + i) : hi * i / 5;
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n", px(x), kBottom + 16,
                       html_escape(tick_text(x)));
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"al\" text-anchor=\"middle\">{}</text>\n", (kLeft + kRight) / 2,
                     kBottom + 32, html_escape(c.x_label + (c.log2_x ? " (log scale)" : "")));
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const auto& s = c.series[i];
    const char* color = kColors[i % std::size(kColors)];
    auto pts = s.points;
    std::sort(pts.begin(), pts.end());
    std::string poly;
    for (const auto& [x, y] : pts)
      if (!c.log2_x || x > 0) poly += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    out += fmt::format("<polyline class=\"series\" data-series=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n",
                       html_escape(s.name), color, s.dashed ? " stroke-dasharray=\"6 4\"" : "", poly);
    for (const auto& [x, y] : pts)
      if (!c.log2_x || x > 0)
        out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}: {} = {}</title></circle>\n",
                           px(x), py(y), color, html_escape(s.name), html_escape(tick_text(x)), y_text(y, c.y_percent));
    const double ly = kTop + 6 + 16 * static_cast<double>(i);
    out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\"{}/>"
                       "<text x=\"{}\" y=\"{:.1f}\" class=\"lg\">{}</text>\n",
                       kRight + 10, ly, kRight + 30, ly, color, s.dashed ? " stroke-dasharray=\"6 4\"" : "", kRight + 35,
                       ly + 4, html_escape(chart_label(s.name, 24)));
  }
  return out + note_text(c.note) + "</svg>\n";
}

std::string render_bar_chart(const BarChart& c) {
  std::string out = open_svg(c.kind, c.title, c.data);
  double ymax = c.reference.value_or(0);
  for (const auto& v : c.values) ymax = std::max(ymax, v.value_or(0));
  ymax = nice_max(ymax * 1.05);
  out += y_axis(ymax, c.y_percent, c.y_label);
  const std::size_t n = c.values.size();
  const double slot = (kRight - kLeft) / static_cast<double>(std::max<std::size_t>(n, 1));
  const bool labels = n <= 32;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = kLeft + slot * static_cast<double>(i) + slot * 0.1;
    const std::string label = i < c.labels.size() ? c.labels[i] : "";
    if (c.values[i] && !c.parts.empty()) {
      out += stacked_bar(c, i, x, slot * 0.8, ymax, label);
    } else if (c.values[i]) {
      const double h = (kBottom - kTop) * std::clamp(*c.values[i] / ymax, 0.0, 1.0);
      const bool warn = i < c.highlight.size() && c.highlight[i];
      out += fmt::format("<rect class=\"bar{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
                         "<title>{}: {}</title></rect>\n",
                         warn ? " straggler" : "", x, kBottom - h, slot * 0.8, h, warn ? kWarn : kColors[0],
                         html_escape(label), y_text(*c.values[i], c.y_percent));
    } else {
      out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n", x + slot * 0.4,
                         kBottom - 4, html_escape(i < c.empty_text.size() ? c.empty_text[i] : "n/a"));
    }
    if (labels)
      out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"end\" transform=\"rotate(-30 {:.1f} {})\">{}</text>\n",
                         x + slot * 0.4, kBottom + 14, x + slot * 0.4, kBottom + 14, html_escape(chart_label(label, 18)));
  }
  for (std::size_t p = 0; p < c.parts.size(); ++p) {  // the stack's legend
    const double ly = kTop + 6 + 16 * static_cast<double>(p);
    out += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"12\" height=\"10\" fill=\"{}\"/>"
                       "<text x=\"{}\" y=\"{:.1f}\" class=\"lg\">{}</text>\n",
                       kRight + 10, ly - 5, kColors[p % std::size(kColors)], kRight + 27, ly + 4,
                       html_escape(chart_label(c.parts[p], 22)));
  }
  if (c.reference) {
    const double y = kBottom - (kBottom - kTop) * std::clamp(*c.reference / ymax, 0.0, 1.0);
    out += fmt::format("<line class=\"reference\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#333\" "
                       "stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/><text x=\"{}\" y=\"{:.1f}\" class=\"lg\">{} {}</text>\n",
                       kLeft, y, kRight, y, kRight + 6, y + 4, html_escape(c.reference_label),
                       y_text(*c.reference, c.y_percent));
  }
  return out + note_text(c.note) + "</svg>\n";
}

}  // namespace gpuscale
