// The terminal text of a comparison (compare.h): rows grouped under their benchmark and unit, each row
// one line of fixed columns that fits the width (a long point name takes a line of its own, a note the
// line after); --wide puts every column, basis, % of peak and repetitions included, on one line per row.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analysis/compare.h"
#include "text/escape.h"
#include "text/number_text.h"
#include "analysis/row_text.h"
#include "text/text_width.h"

namespace gpuscale {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "-" : out;
}

// One number format per column: values 4 significant digits; B/A and its range 3 decimals below 100,
// whole numbers up to a million, then 1e+06 style (at most 6 characters: the columns never overflow).
std::string figure(const std::optional<double>& v) { return v ? figure_text(*v) : "-"; }
std::string bound(double x) {
  if (!std::isfinite(x)) return "inf";
  if (x < 99.9995) return fmt::format("{:.3f}", x);
  if (x < 999999.5) return fmt::format("{:.0f}", x);
  return fmt::format("{:.0e}", x);
}

std::optional<double> shown_value(const ComparedRow& r, const ResultRow& row) {
  if (row.status != RowStatus::ok) return std::nullopt;
  return r.on_fraction_of_peak ? row.fraction_of_peak : row.aggregate;
}
std::string value_cell(const ComparedRow& r, const ResultRow& row) {
  return row.status == RowStatus::ok ? figure(shown_value(r, row)) : value_text(row);
}

// The B/A range: the goodness interval back on B/A (inverted for lower-is-better units).
std::string range_cell(const ComparedRow& r) {
  if (!r.change || !r.change->noise_known) return "-";
  const bool lower = unit_direction(r.a->unit) == Better::lower;
  const double lo = lower ? (r.change->hi > 0 ? 1 / r.change->hi : 0) : r.change->lo;
  const double hi = lower ? (r.change->lo > 0 ? 1 / r.change->lo : INFINITY) : r.change->hi;
  return bound(lo) + "-" + bound(hi);
}

std::string point_label(const ResultRow& r) {
  const auto p = params_label(r.params, false);
  return term_text(fmt::format("{}{}@ {}", p, p.empty() ? "" : " ", r.gpu_count));
}

std::string noise_cell(const NoiseBand& n) {
  return n.known() ? fmt::format("-{:.1f}/+{:.1f}% n={}", n.down * 100, n.up * 100, n.reps) : "n<2";
}

constexpr std::size_t kVal = 9, kRatio = 6, kRange = 13, kVerdict = 12;

std::string narrow_rows(const std::vector<const ComparedRow*>& rows, std::size_t width) {
  // "  label A B B/A range  verdict": 2 + label + 1 + 9 + 1 + 9 + 1 + 6 + 1 + 13 + 2 + 12 columns.
  const std::size_t fixed = 2 + 1 + kVal + 1 + kVal + 1 + kRatio + 1 + kRange + 2 + kVerdict;
  const std::size_t label_w = width > fixed + 6 ? width - fixed : 6;
  auto line = [&](const std::string& label, const std::string& a, const std::string& b, const std::string& ratio,
                  const std::string& range, const std::string& verdict) {
    return "  " + pad_right(label, label_w) + " " + pad_left(a, kVal) + " " + pad_left(b, kVal) + " " +
           pad_left(ratio, kRatio) + " " + pad_left(range, kRange) + "  " + verdict;
  };
  std::string out = line("point @ GPUs", "A", "B", "B/A", "B/A range", "verdict") + "\n";
  std::string group;
  for (const ComparedRow* r : rows) {
    const std::string heading = term_text(fmt::format("{} ({}{})", r->a->benchmark, r->on_fraction_of_peak ? "fraction of peak, " : "",
                                                      r->a->unit));
    if (heading != group) out += wrap_words(heading, width, "  ");
    group = heading;
    std::string label = point_label(*r->a);
    if (display_width(label) > label_w) {
      out += wrap_words(label, width - 2, "    ").insert(0, "  ");
      label.clear();
    }
    std::string text = line(label, value_cell(*r, *r->a), value_cell(*r, *r->b), r->ratio ? bound(*r->ratio) : "-",
                            range_cell(*r), std::string(verdict_name(r->verdict)));
    const std::string note = r->note.empty() ? "" : "(" + term_text(r->note) + ")";
    if (!note.empty() && display_width(text) + 1 + display_width(note) <= width) text += " " + note;
    else if (!note.empty()) text += "\n" + wrap_words(note, width - 4, "    ").insert(0, "    ");
    if (text.back() == '\n') text.pop_back();
    // Columns sized for every figure bound() writes; should a line still overflow, it wraps.
    if (text.find('\n') == std::string::npos && display_width(text) > width) {
      text = wrap_words(text, width, "    ");
      text.pop_back();
    }
    out += text + "\n";
  }
  return out;
}

std::string wide_rows(const std::vector<const ComparedRow*>& rows) {
  std::size_t wb = 9, wp = 5;
  for (const ComparedRow* r : rows) {
    wb = std::max(wb, display_width(term_text(r->a->benchmark)));
    wp = std::max(wp, display_width(point_label(*r->a)));
  }
  const auto line = fmt::format("{{:<{}}} {{:<{}}} {{:>9}} {{:>9}} {{:<9}} {{:>6}} {{:>13}} {{:<5}} {{:>7}} {{:>7}} {{:>18}} {{:>18}}  {{}}\n", wb, wp);
  std::string out = fmt::format(fmt::runtime(line), "benchmark", "point @ GPUs", "A", "B", "unit", "B/A", "B/A range", "basis",
                                "A %peak", "B %peak", "A noise", "B noise", "verdict");
  for (const ComparedRow* r : rows) {
    std::string verdict(verdict_name(r->verdict));
    if (!r->note.empty()) verdict += " (" + term_text(r->note) + ")";
    out += fmt::format(fmt::runtime(line), term_text(r->a->benchmark), point_label(*r->a), value_cell(*r, *r->a),
                       value_cell(*r, *r->b), r->on_fraction_of_peak ? "fraction" : term_text(r->a->unit),
                       r->ratio ? bound(*r->ratio) : "-", range_cell(*r), r->on_fraction_of_peak ? "peak" : "value",
                       percent_text(r->a->fraction_of_peak), percent_text(r->b->fraction_of_peak), noise_cell(r->noise_a),
                       noise_cell(r->noise_b), verdict);
  }
  return out;
}

}  // namespace

std::string format_comparison(const Comparison& c, const CompareView& view) {
  const std::size_t width = view.wide ? std::string::npos / 2 : std::max(view.width, kMinWidth);
  std::string out = wrap_words(fmt::format("A: {} (cluster {}, {})", term_text(c.file_a), term_text(c.cluster_a),
                                           term_text(join(c.models_a))), width, "   ");
  out += wrap_words(fmt::format("B: {} (cluster {}, {})", term_text(c.file_b), term_text(c.cluster_b), term_text(join(c.models_b))),
                    width, "   ");
  out += wrap_words(c.models_differ ? "device models differ: rows with a known peak are judged on fraction of peak, the others "
                                      "on absolute values"
                                    : "same device models: rows are judged on absolute values",
                    width);
  out += wrap_words(fmt::format("threshold {:.1f}%; B/A range: where the repetitions (a confidence interval of each median) "
                                "let B/A lie; a regression when all of it is worse than the threshold, inconclusive "
                                "when it crosses the threshold (docs/analysis.md){}",
                                c.threshold * 100, view.only_changes ? "; only changed rows shown (--only-changes)" : ""),
                    width);
  out += "\n";
  std::vector<const ComparedRow*> rows;
  for (const auto& r : c.rows)
    if (!view.only_changes || is_change(r.verdict)) rows.push_back(&r);
  if (rows.empty()) out += view.only_changes ? "no regression, improvement or problem\n" : "no matched rows\n";
  else out += view.wide ? wide_rows(rows) : narrow_rows(rows, width);
  auto list_only = [&](const char* which, const std::vector<const ResultRow*>& only) {
    if (only.empty()) return;
    out += fmt::format("\n{} row(s) only in {} (not compared):\n", only.size(), which);
    for (const ResultRow* r : only) out += wrap_words(term_text(r->benchmark + " " + point_at(*r)), width - 2, "    ").insert(0, "  ");
  };
  list_only("A", c.only_a);
  list_only("B", c.only_b);
  out += "\n" + wrap_words(verdict_summary(c), width, "  ");
  return out;
}

}  // namespace gpuscale
