#include "analysis/compare.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analysis/row_text.h"
#include "results/row_fields.h"

namespace gpuscale {
namespace {

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
  // A row without a value (a collective at 1 GPU has its time but no bandwidth) is not compared.
  // The judged row field (results/row_fields.h): the figure, or across device models its fraction of peak.
  const RowField& basis = c.on_fraction_of_peak ? fields::fraction_of_peak : fields::aggregate;
  const std::optional<double> va = number_field(a, basis), vb = number_field(b, basis);
  if (!va || !(*va > 0) || !vb || !(*vb > 0)) {
    c.verdict = Verdict::not_comparable;
    c.note = !va || !(*va > 0) ? "no value in A" : "no value in B";
    return;
  }
  c.ratio = *vb / *va;
  c.change = change_of(dir, *va, *vb, c.noise_a, c.noise_b);
  c.verdict = verdict_of_change(*c.change, threshold);
  if (c.verdict == Verdict::inconclusive && !c.change->noise_known) c.note = "no noise estimate: < 2 repetitions";
}

}  // namespace

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::same: return "same";
    case Verdict::improvement: return "improvement";
    case Verdict::regression: return "REGRESSION";
    case Verdict::inconclusive: return "inconclusive";
    case Verdict::problem: return "PROBLEM";
    case Verdict::skipped: return "skipped";
    case Verdict::not_comparable: return "n/a";
  }
  return "?";
}

Verdict verdict_of_change(const Change& c, double threshold) {
  if (!c.noise_known) return Verdict::inconclusive;
  if (c.hi < 1 - threshold) return Verdict::regression;
  if (c.lo > 1 + threshold) return Verdict::improvement;
  if (c.lo >= 1 - threshold && c.hi <= 1 + threshold) return Verdict::same;
  return Verdict::inconclusive;
}

bool is_change(Verdict v) { return v == Verdict::regression || v == Verdict::improvement || v == Verdict::problem; }

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
    // --lenient: a figure from a file that contradicts itself is shown, marked, never silently judged.
    for (const auto& [side, row] : {std::pair{"A", cr.a}, std::pair{"B", cr.b}})
      if (const auto* why = untrusted_reason(*row))
        cr.note += fmt::format("{}UNTRUSTED in {}: {}", cr.note.empty() ? "" : "; ", side, *why);
    c.rows.push_back(std::move(cr));
  }
  for (const auto& r : b.rows)
    if (!matched.count(row_key(r))) c.only_b.push_back(&r);
  return c;
}

std::string verdict_summary(const Comparison& c) {
  std::string out = fmt::format("{} matched:", c.rows.size());
  const std::pair<Verdict, const char*> order[] = {
      {Verdict::regression, "regression"}, {Verdict::improvement, "improvement"}, {Verdict::same, "same"},
      {Verdict::inconclusive, "inconclusive"}, {Verdict::problem, "problem"},     {Verdict::skipped, "skipped"},
      {Verdict::not_comparable, "not comparable"}};
  for (std::size_t i = 0; i < std::size(order); ++i)
    out += fmt::format("{} {} {}", i ? "," : "", c.count(order[i].first), order[i].second);
  return out + fmt::format("; {} only in A, {} only in B", c.only_a.size(), c.only_b.size());
}

JUnitSuite comparison_suite(const Comparison& c) {
  JUnitSuite s{fmt::format("compare {} vs {}", c.file_a, c.file_b), {}};
  for (const auto& r : c.rows) {
    JUnitCase jc = row_case("gpuscale.compare", *r.a);
    jc.failed = r.verdict == Verdict::regression || r.verdict == Verdict::problem;
    jc.skipped = r.verdict == Verdict::skipped || r.verdict == Verdict::not_comparable;
    if (jc.failed || jc.skipped)
      jc.message = r.verdict == Verdict::regression
                       ? fmt::format("B/A = {:.3f} ({} {} -> {}); goodness interval [{:.3f}, {:.3f}]", *r.ratio,
                                     r.on_fraction_of_peak ? "fraction of peak" : "value", value_text(*r.a),
                                     value_text(*r.b), r.change->lo, r.change->hi)
                       : fmt::format("{}: {}", verdict_name(r.verdict), r.note);
    s.cases.push_back(std::move(jc));
  }
  return s;
}

}  // namespace gpuscale
