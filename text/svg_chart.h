#pragma once
// Charts as inline SVG drawn here (no JavaScript, no external resources): line charts with a linear or
// log2 x axis, and bar charts with a reference line. Every text is escaped. Each <svg> carries
// data-chart="<kind>" (and the data attributes given), so tests and scripts can find the charts.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuscale {

struct ChartSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in x order
  bool dashed = false;                            // projections are dashed
};

struct LineChart {
  std::string kind, title, x_label, y_label, note;
  std::vector<std::pair<std::string, std::string>> data;  // extra data-* attributes
  bool log2_x = false;
  std::function<std::string(double)> x_tick_text;  // default: the number
  bool y_percent = false;                          // y values are fractions shown as %
  std::vector<ChartSeries> series;
};

struct BarChart {
  std::string kind, title, y_label, note;
  std::vector<std::pair<std::string, std::string>> data;
  bool y_percent = false;
  std::vector<std::string> labels;
  std::vector<std::optional<double>> values;  // nullopt: no bar (e.g. unknown peak)
  std::vector<std::string> empty_text;         // what a missing bar says ("n/a" when not given)
  std::vector<bool> highlight;                // drawn in the warning colour (stragglers)
  std::optional<double> reference;            // a horizontal line (the median)
  std::string reference_label;
  // A stacked bar chart when not empty: bar i is parts_of[i] (one figure per part, in `parts` order)
  // stacked from the axis, each part in its own colour with a legend; values[i] is their sum.
  std::vector<std::string> parts;
  std::vector<std::vector<double>> parts_of;
};

// Whether a chart has anything to draw: a line chart a series of two or more points (one point draws
// no line), a bar chart one bar. A report draws no chart without, and says in one line why.
bool has_lines(const LineChart& c);
bool has_bars(const BarChart& c);

std::string render_line_chart(const LineChart& c);
// At most n bytes of s, cut at a UTF-8 character boundary, "~" marking the cut (labels that must fit).
std::string chart_label(const std::string& s, std::size_t n);
std::string render_bar_chart(const BarChart& c);

}  // namespace gpuscale
