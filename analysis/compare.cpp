#include "analysis/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "analysis/escape.h"
#include "analysis/row_text.h"

namespace gpuscale {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "-" : out;
}

// The relative change noise alone can explain, in the worse (or better) direction.
double worse_noise(Better dir, const NoiseBand& a, const NoiseBand& b) {
  if (dir == Better::higher) return 1 - (1 - std::min(a.down, 1.0)) / (1 + b.up);
  return b.down >= 1 ? kInf : (1 + a.up) / (1 - b.down) - 1;
}
double better_noise(Better dir, const NoiseBand& a, const NoiseBand& b) { return worse_noise(dir == Better::higher ? Better::lower : Better::higher, a, b); }

void judge(ComparedRow& c, Better dir, double threshold) {
  const ResultRow& a = *c.a;
  const ResultRow& b = *c.b;
  if (row_is_problem(a) || row_is_problem(b)) {
    c.verdict = Verdict::problem;
    c.note = row_is_problem(b) ? fmt::format("{} in B", row_status_name(b.status))
                               : fmt::format("{} in A", row_status_name(a.status));
    return;
  }
  if (a.status == RowStatus::skipped || b.status == RowStatus::skipped) {
    c.verdict = Verdict::skipped;
    c.note = a.status == RowStatus::skipped ? "skipped in A" : "skipped in B";
    return;
  }
  if (a.unit != b.unit) {
    c.verdict = Verdict::not_comparable;
    c.note = fmt::format("unit changed: {} / {}", a.unit, b.unit);
    return;
  }
  if (dir == Better::unknown) {
    c.verdict = Verdict::not_comparable;
    c.note = fmt::format("unit {} has no known better direction", a.unit);
    return;
  }
  std::optional<double> va = a.aggregate, vb = b.aggregate;
  if (c.on_fraction_of_peak) va = a.fraction_of_peak, vb = b.fraction_of_peak;
  if (!va || !vb || !(*va > 0)) {
    c.verdict = Verdict::not_comparable;
    c.note = "no positive value in A";
    if (va && *va > 0) c.note = "no value in B";
    return;
  }
  c.ratio = *vb / *va;
  const double change = dir == Better::higher ? 1 - *c.ratio : *c.ratio - 1;  // > 0: worse
  if (change > threshold && change > worse_noise(dir, c.noise_a, c.noise_b)) c.verdict = Verdict::regression;
  else if (-change > threshold && -change > better_noise(dir, c.noise_a, c.noise_b)) c.verdict = Verdict::better;
  else c.verdict = Verdict::same;
}

}  // namespace

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::same: return "same";
    case Verdict::better: return "better";
    case Verdict::regression: return "REGRESSION";
    case Verdict::problem: return "PROBLEM";
    case Verdict::skipped: return "skipped";
    case Verdict::not_comparable: return "n/a";
  }
  return "?";
}

std::size_t Comparison::count(Verdict v) const {
  return static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [&](const auto& r) { return r.verdict == v; }));
}

Comparison compare_results(const LoadedResult& a, const LoadedResult& b, double threshold) {
  Comparison c;
  c.file_a = a.path;
  c.file_b = b.path;
  c.cluster_a = a.cluster;
  c.cluster_b = b.cluster;
  c.models_a = a.device_models;
  c.models_b = b.device_models;
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  c.models_differ = sorted(a.device_models) != sorted(b.device_models);
  c.threshold = threshold;
  std::map<std::string, const ResultRow*> in_b;
  for (const auto& r : b.rows) in_b.emplace(row_key(r), &r);
  std::map<std::string, bool> matched;
  for (const auto& r : a.rows) {
    const auto key = row_key(r);
    auto it = in_b.find(key);
    if (it == in_b.end()) {
      c.only_a.push_back(&r);
      continue;
    }
    matched[key] = true;
    ComparedRow cr;
    cr.a = &r;
    cr.b = it->second;
    cr.noise_a = noise_band(r);
    cr.noise_b = noise_band(*it->second);
    cr.on_fraction_of_peak = c.models_differ && r.fraction_of_peak && it->second->fraction_of_peak;
    judge(cr, unit_direction(r.unit), threshold);
    c.rows.push_back(std::move(cr));
  }
  for (const auto& r : b.rows)
    if (!matched.count(row_key(r))) c.only_b.push_back(&r);
  return c;
}

std::string format_comparison(const Comparison& c) {
  std::string out = fmt::format("A: {} (cluster {}, {})\nB: {} (cluster {}, {})\n", term_text(c.file_a),
                                term_text(c.cluster_a), term_text(join(c.models_a)), term_text(c.file_b),
                                term_text(c.cluster_b), term_text(join(c.models_b)));
  out += c.models_differ ? "device models differ: rows with a known peak are judged on fraction of peak (basis 'peak'), "
                           "the others on absolute values\n"
                         : "same device models: rows are judged on absolute values\n";
  out += fmt::format("regression: B worse than A by more than {:.1f}% and by more than the noise of both "
                     "(repetition spread; docs/analysis.md)\n\n",
                     c.threshold * 100);
  std::size_t wb = 9, wp = 5;
  for (const auto& r : c.rows) {
    wb = std::max(wb, term_text(r.a->benchmark).size());
    wp = std::max(wp, term_text(params_label(r.a->params, false)).size());
  }
  const auto line = fmt::format("{{:<{}}} {{:<{}}} {{:>5}} {{:>11}} {{:>11}} {{:>7}} {{:>5}} {{:>8}} {{:>8}} {{:>7}}  {{}}\n", wb, wp);
  out += fmt::format(fmt::runtime(line), "benchmark", "point", "GPUs", "A", "B", "B/A", "basis", "A %peak", "B %peak",
                     "noise", "verdict");
  for (const auto& r : c.rows) {
    const Better dir = unit_direction(r.a->unit);
    const double noise = dir == Better::unknown ? 0 : worse_noise(dir, r.noise_a, r.noise_b);
    std::string verdict(verdict_name(r.verdict));
    if (!r.note.empty()) verdict += " (" + term_text(r.note) + ")";
    out += fmt::format(fmt::runtime(line), term_text(r.a->benchmark), term_text(params_label(r.a->params, false)),
                       r.a->gpu_count, value_text(*r.a), value_text(*r.b),
                       r.ratio ? fmt::format("{:.3f}", *r.ratio) : "-", r.on_fraction_of_peak ? "peak" : "value",
                       percent_text(r.a->fraction_of_peak), percent_text(r.b->fraction_of_peak),
                       std::isfinite(noise) ? fmt::format("{:.1f}%", noise * 100) : "inf", verdict);
  }
  auto list_only = [&](const char* which, const std::vector<const ResultRow*>& rows) {
    if (rows.empty()) return;
    out += fmt::format("\n{} row(s) only in {} (not compared):\n", rows.size(), which);
    for (const ResultRow* r : rows) out += "  " + term_text(r->benchmark + " " + point_at(*r)) + "\n";
  };
  list_only("A", c.only_a);
  list_only("B", c.only_b);
  out += fmt::format("\n{} matched: {} same, {} better, {} regression(s), {} problem(s) (invalid or failed), {} skipped, "
                     "{} not comparable; {} only in A, {} only in B\n",
                     c.rows.size(), c.count(Verdict::same), c.count(Verdict::better), c.count(Verdict::regression),
                     c.count(Verdict::problem), c.count(Verdict::skipped), c.count(Verdict::not_comparable),
                     c.only_a.size(), c.only_b.size());
  return out;
}

JUnitSuite comparison_suite(const Comparison& c) {
  JUnitSuite s{fmt::format("compare {} vs {}", c.file_a, c.file_b), {}};
  for (const auto& r : c.rows) {
    JUnitCase jc = row_case("gpuscale.compare", *r.a);
    jc.failed = r.verdict == Verdict::regression || r.verdict == Verdict::problem;
    jc.skipped = r.verdict == Verdict::skipped || r.verdict == Verdict::not_comparable;
    if (jc.failed || jc.skipped)
      jc.message = r.verdict == Verdict::regression
                       ? fmt::format("B/A = {:.3f} ({} {} -> {})", *r.ratio, r.on_fraction_of_peak ? "fraction of peak" : "value",
                                     value_text(*r.a), value_text(*r.b))
                       : fmt::format("{}: {}", verdict_name(r.verdict), r.note);
    s.cases.push_back(std::move(jc));
  }
  return s;
}

}  // namespace gpuscale
