// The terminal text of gpuscale check against a reference (reference.h): rows grouped under their
// benchmark and unit, one line of fixed columns per row that fits the width (a long point name takes a
// line of its own; a row with no figure to show has its reason on the line after).
#include <algorithm>

#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/reference.h"
#include "analysis/row_text.h"
#include "text/text_width.h"
#include "text/number_text.h"

namespace gpuscale {
namespace {

constexpr std::size_t kStatus = 4, kVal = 9, kRange = 20;  // the widest figure_text(): 9 characters

}  // namespace

std::string format_check(const CheckOutcome& c, std::size_t width) {
  width = std::max(width, kMinWidth);
  std::string used;
  for (std::size_t i = 0; i < c.clusters_used.size(); ++i) used += (i ? ", " : "") + term_text(c.clusters_used[i]);
  std::string out = wrap_words(fmt::format("check {} (cluster {}) against reference cluster(s): {}", term_text(c.file),
                                           term_text(c.cluster), used),
                               width, "  ");
  out += "\n";
  const std::size_t fixed = 2 + kStatus + 1 + 1 + kVal + 1 + kRange + 1 + kVal;
  const std::size_t label_w = width - fixed;
  auto line = [&](const std::string& status, const std::string& label, const std::string& value, const std::string& range,
                  const std::string& ref) {
    std::string l = "  " + pad_right(status, kStatus) + " " + pad_right(label, label_w) + " " + pad_left(value, kVal) + " " +
                    pad_left(range, kRange) + " " + pad_left(ref, kVal);
    while (!l.empty() && l.back() == ' ') l.pop_back();
    return display_width(l) <= width ? l + "\n" : wrap_words(l, width, "       ");  // never wider, should a figure be
  };
  if (!c.checked.empty()) out += line("", "point @ GPUs", "value", "passes in", "reference");
  std::string group;
  for (const auto& r : c.checked) {
    const auto heading = term_text(fmt::format("{} ({})", r.row->benchmark, r.row->unit));
    if (heading != group) out += wrap_words(heading, width, "  ");
    group = heading;
    const auto p = params_label(r.row->params, false);
    std::string label = term_text(fmt::format("{}{}@ {}", p, p.empty() ? "" : " ", r.row->gpu_count));
    const std::string status = r.pass ? "ok" : "FAIL";
    if (display_width(label) > label_w) {
      out += wrap_words(label, width - 2 - kStatus - 1, "  ").insert(0, "  " + pad_right(status, kStatus) + " ");
      label.clear();
    }
    const ReferenceEntry& e = *r.entry;
    const bool measured = r.row->status == RowStatus::ok && r.row->unit == e.unit && r.row->aggregate;
    if (measured) {
      const double lo = e.lower ? e.value * (1 - *e.lower) : 0;
      const double hi = e.upper ? e.value * (1 + *e.upper) : INFINITY;
      out += line(label.empty() ? "" : status, label, figure_text(*r.row->aggregate), figure_text(lo) + ".." + figure_text(hi),
                  figure_text(e.value));
    } else {
      if (!label.empty()) out += line(status, label, "-", "", figure_text(e.value));
      out += wrap_words(term_text(r.message), width - 7, "       ").insert(0, "       ");
    }
  }
  for (const ReferenceEntry* e : c.unmatched)
    out += wrap_words(fmt::format("  FAIL reference {} matched no row of the run", term_text(e->describe())), width, "       ");
  const std::size_t failed = c.failures() - c.unmatched.size();
  out += "\n" + wrap_words(fmt::format("{} row(s) checked: {} passed, {} failed; {} reference entr{} matched no row; {} row(s) "
                                       "not covered by the reference",
                                       c.checked.size(), c.checked.size() - failed, failed, c.unmatched.size(),
                                       c.unmatched.size() == 1 ? "y" : "ies", c.uncovered),
                           width, "  ");
  return out;
}

}  // namespace gpuscale
