#include "analysis/projection.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "text/escape.h"
#include "text/number_text.h"
#include "analysis/row_text.h"
#include "results/row_fields.h"
#include "collectives/collective_table.h"
#include "core/stats.h"
#include "core/units.h"

namespace gpuscale {
namespace {

double rms_rel(const std::vector<std::pair<double, double>>& model_vs_measured) {
  if (model_vs_measured.empty()) return 0;
  double ss = 0;
  for (const auto& [m, t] : model_vs_measured) ss += ((m - t) / t) * ((m - t) / t);
  return std::sqrt(ss / static_cast<double>(model_vs_measured.size()));
}

// Bytes of one operation: algbw x time when recorded (exactly nccl-tests' algbw bytes), else the size.
std::optional<double> op_bytes(const ResultRow& r) {
  const auto t = number_field(r, fields::time_us);
  if (auto a = number_field(r, fields::algbw); a && t && *a > 0) return *a * *t * 1e3;
  return number_field(r, fields::size_bytes);
}

// dp-step: the all_reduce time of one step's gradients in buckets, from the all_reduce fit.
double bucketed_allreduce_us(const AlphaBetaFit& fit, int n, double gradient_bytes, double bucket_bytes) {
  if (n < 2) return 0;
  if (!(bucket_bytes > 0) || bucket_bytes >= gradient_bytes) return model_time_us(fit, n, gradient_bytes);
  const double full = std::floor(gradient_bytes / bucket_bytes);
  const double rest = gradient_bytes - full * bucket_bytes;
  return full * model_time_us(fit, n, bucket_bytes) + (rest > 0 ? model_time_us(fit, n, rest) : 0);
}

// Rows of the transport the projection models: NCCL on the CUDA backend (MPI rows there are a
// comparison, params.transport = "mpi"), the only one elsewhere (no transport parameter).
bool modelled_transport(const ResultRow& r) {
  return !r.params.contains("transport") || r.params["transport"] == "nccl";
}

}  // namespace

int latency_steps(const std::string& collective, int n) {
  const auto c = parse_collective(collective);
  if (!c || n < 2) return 0;
  return collective_spec(*c).latency_steps(n);
}

std::optional<double> bus_factor(const std::string& collective, int n) {
  const auto c = parse_collective(collective);
  if (!c) return std::nullopt;
  return collective_spec(*c).bus_factor(n);
}

double model_time_us(const AlphaBetaFit& f, int n, double bytes) {
  const double factor = bus_factor(f.collective, n).value_or(1.0);
  return f.alpha_us * latency_steps(f.collective, n) + factor * bytes / (f.beta_gbps * 1e3);
}

double model_busbw(const AlphaBetaFit& f, int n, double bytes) {
  const double t = model_time_us(f, n, bytes);
  return t > 0 ? bus_factor(f.collective, n).value_or(1.0) * bytes / t / 1e3 : 0;
}

AlphaBetaFit fit_alpha_beta(const std::string& collective, const std::vector<FitPoint>& points) {
  AlphaBetaFit fit;
  fit.collective = collective;
  // Rows of the weighted system: [steps/t, factor x bytes/t] . [alpha, c] = 1, with c = 1/beta (us per byte).
  std::vector<std::array<double, 2>> a;
  std::set<double> ratios;
  for (const auto& p : points) {
    const auto factor = bus_factor(collective, p.n);
    const int steps = latency_steps(collective, p.n);
    if (!factor || steps == 0 || !(*factor > 0) || !(p.time_us > 0) || !(p.bytes > 0)) continue;
    a.push_back({steps / p.time_us, *factor * p.bytes / p.time_us});
    ratios.insert(*factor * p.bytes / steps);
    if (std::find(fit.gpu_counts.begin(), fit.gpu_counts.end(), p.n) == fit.gpu_counts.end()) fit.gpu_counts.push_back(p.n);
    fit.min_bytes = fit.points == 0 ? p.bytes : std::min(fit.min_bytes, p.bytes);
    fit.max_bytes = std::max(fit.max_bytes, p.bytes);
    ++fit.points;
  }
  std::sort(fit.gpu_counts.begin(), fit.gpu_counts.end());
  if (!parse_collective(collective)) {
    fit.why = "not a collective gpuscale models";
    return fit;
  }
  if (fit.points < 3 || ratios.size() < 2) {
    fit.why = fmt::format("{} usable point(s) with {} distinct size(s): needs at least 3 points and 2 sizes", fit.points,
                          ratios.size());
    return fit;
  }
  double s11 = 0, s12 = 0, s22 = 0, b1 = 0, b2 = 0;
  for (const auto& r : a) {
    s11 += r[0] * r[0];
    s12 += r[0] * r[1];
    s22 += r[1] * r[1];
    b1 += r[0];
    b2 += r[1];
  }
  const double det = s11 * s22 - s12 * s12;
  double alpha = det > 1e-12 * s11 * s22 ? (b1 * s22 - b2 * s12) / det : -1;
  double c = det > 1e-12 * s11 * s22 ? (s11 * b2 - s12 * b1) / det : 0;
  if (alpha < 0) {  // latency below what noise can resolve: a pure bandwidth model
    alpha = 0;
    c = b2 / s22;
  }
  if (!(c > 0)) {
    fit.why = "the time does not grow with the size: no bandwidth term can be fitted";
    return fit;
  }
  fit.ok = true;
  fit.alpha_us = alpha;
  fit.beta_gbps = 1 / (c * 1e3);
  std::vector<std::pair<double, double>> errs;
  for (const auto& p : points)
    if (p.time_us > 0 && p.bytes > 0 && latency_steps(collective, p.n) > 0)
      errs.emplace_back(model_time_us(fit, p.n, p.bytes), p.time_us);
  fit.rms_rel_error = rms_rel(errs);
  return fit;
}

std::optional<std::string> projection_refusal(std::size_t multi_gpu_counts, double rms_rel_error) {
  if (multi_gpu_counts < kMinProjectionCounts)
    return fmt::format("measured at {} multi-GPU count(s), a projection needs at least {} (one count cannot show how "
                       "the time grows with the count)",
                       multi_gpu_counts, kMinProjectionCounts);
  if (!(rms_rel_error <= kMaxProjectionFitError))
    return fmt::format("fit error {:.1f}% RMS is above the {:.0f}% bound (the model does not describe its own points)",
                       rms_rel_error * 100, kMaxProjectionFitError * 100);
  return std::nullopt;
}

namespace {

const AlphaBetaFit* find_fit(const std::vector<AlphaBetaFit>& fits, const std::string& c, const std::string& topo) {
  for (const auto& f : fits)
    if (f.collective == c && f.topology == topo) return &f;
  return nullptr;
}

// Every (collective, topology) fitted over its ok rows at >= 2 ranks of the modelled transport, sizes
// and counts pooled: one level's alpha and beta do not depend on the count. In the order the rows
// first show each.
std::vector<AlphaBetaFit> fit_levels(const std::vector<ResultRow>& rows) {
  std::map<std::pair<std::string, std::string>, std::vector<FitPoint>> pts;
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& r : rows) {
    if (r.scope != "collective" || r.status != RowStatus::ok || r.gpu_count < 2 || !parse_collective(r.benchmark) ||
        !modelled_transport(r))
      continue;
    const auto t = number_field(r, fields::time_us);
    const auto bytes = op_bytes(r);
    if (!t || !bytes) continue;
    const auto key = std::make_pair(r.benchmark, r.topology);
    if (!pts.count(key)) order.push_back(key);
    pts[key].push_back({r.gpu_count, *bytes, *t});
  }
  std::vector<AlphaBetaFit> fits;
  for (const auto& key : order) {
    auto fit = fit_alpha_beta(key.first, pts[key]);
    fit.topology = key.second;
    fits.push_back(std::move(fit));
  }
  return fits;
}

// Collective `c` at the level of its largest measured count and largest size, predicted at the
// targets by that level's fit; refused (fit.ok false, why said) where its counts or fit error cannot
// carry a projection.
CollectiveProjection project_collective(const std::vector<ResultRow>& rows, const std::string& c,
                                        const std::vector<AlphaBetaFit>& fits, const std::vector<int>& targets) {
  CollectiveProjection cp;
  cp.collective = c;
  for (const auto& r : rows)
    if (r.benchmark == c && r.status == RowStatus::ok && r.gpu_count >= 2 && modelled_transport(r) &&
        r.params.contains("size_bytes") && r.params["size_bytes"].is_number()) {
      if (r.gpu_count > cp.measured_n) cp.measured_n = r.gpu_count, cp.topology = r.topology;
      cp.size_bytes = std::max(cp.size_bytes, r.params["size_bytes"].get<double>());
    }
  std::vector<double> measured, peaks;
  for (const auto& r : rows)
    if (r.benchmark == c && r.status == RowStatus::ok && r.gpu_count == cp.measured_n && modelled_transport(r) &&
        r.params.contains("size_bytes") && r.params["size_bytes"].is_number() &&
        r.params["size_bytes"].get<double>() == cp.size_bytes) {
      if (r.aggregate) measured.push_back(*r.aggregate);
      if (r.expected_peak) peaks.push_back(*r.expected_peak);
    }
  if (!measured.empty()) cp.measured_busbw = median_of(measured);
  if (!peaks.empty()) cp.link_peak = median_of(peaks);
  if (const AlphaBetaFit* f = find_fit(fits, c, cp.topology)) cp.fit = *f;
  std::set<int> counts;  // the collective's measured multi-GPU counts, every level
  for (const auto& f : fits)
    if (f.collective == c) counts.insert(f.gpu_counts.begin(), f.gpu_counts.end());
  if (cp.fit.ok)
    if (auto why = projection_refusal(counts.size(), cp.fit.rms_rel_error)) cp.fit.ok = false, cp.fit.why = *why;
  cp.target_n = targets;
  if (cp.fit.ok)
    for (int n : cp.target_n) cp.predicted_busbw.push_back(model_busbw(cp.fit, n, cp.size_bytes));
  return cp;
}

// dp-step's rows of each parameter point, in the order the rows first show it.
std::vector<std::pair<std::string, std::vector<const ResultRow*>>> dp_step_series(const std::vector<ResultRow>& rows) {
  std::vector<std::pair<std::string, std::vector<const ResultRow*>>> out;
  std::map<std::string, std::size_t> at;
  for (const auto& r : rows)
    if (r.benchmark == "dp-step") {
      const auto label = params_label(r.params, false);
      const auto [it, fresh] = at.emplace(label, out.size());
      if (fresh) out.push_back({label, {}});
      out[it->second].second.push_back(&r);
    }
  return out;
}

// One dp-step series: its step at 1 GPU is the compute, the all_reduce fit of its level the
// communication, and the measured exposed time how much of it the overlap hides; the step predicted
// at the targets. Not projected (ok false, why said) where a piece is missing or a model's error is
// above the bound: the partial figures stay for the text.
DpStepProjection project_dp_step(const std::string& label, const std::vector<const ResultRow*>& series,
                                 const std::vector<AlphaBetaFit>& fits, const std::vector<int>& targets) {
  DpStepProjection d;
  d.series = label;
  const ResultRow* one = nullptr;
  const ResultRow* largest = nullptr;
  std::vector<const ResultRow*> rows;
  for (const ResultRow* r : series) {
    if (r->status != RowStatus::ok || !number_field(*r, fields::step_time_us) || !(*number_field(*r, fields::step_time_us) > 0))
      continue;
    rows.push_back(r);
    if (r->gpu_count == 1) one = r;
    if (!largest || r->gpu_count > largest->gpu_count) largest = r;
  }
  auto fail = [&](std::string why) {
    d.why = std::move(why);
    return d;
  };
  if (!one) return fail("needs a valid dp-step row at 1 GPU (step_time_us) as the reference of efficiency");
  const double step1 = *number_field(*one, fields::step_time_us);
  d.compute_us = number_field(*one, fields::compute_time_us).value_or(step1 - number_field(*one, fields::exposed_comm_us).value_or(0));
  d.gradient_bytes = number_field(*largest, fields::gradient_bytes).value_or(0);
  if (largest->params.contains("bucket_bytes") && largest->params["bucket_bytes"].is_number())
    d.bucket_bytes = largest->params["bucket_bytes"].get<double>();
  for (const ResultRow* r : rows) {
    const double st = *number_field(*r, fields::step_time_us);
    d.measured.push_back({r->gpu_count, st, step1 / st});
  }
  const AlphaBetaFit* fit = largest->gpu_count >= 2 ? find_fit(fits, "all_reduce", largest->topology) : nullptr;
  if (!(d.gradient_bytes > 0)) return fail("dp-step rows lack metrics.gradient_bytes");
  if (largest->gpu_count < 2) return fail("dp-step was measured at one GPU only");
  if (!fit || !fit->ok)
    return fail(fmt::format("needs an all_reduce fit at the {} level (all_reduce rows at >= 2 GPUs)", largest->topology));
  std::set<int> counts;  // dp-step's own measured multi-GPU counts
  for (const ResultRow* r : rows)
    if (r->gpu_count >= 2) counts.insert(r->gpu_count);
  if (auto why = projection_refusal(counts.size(), fit->rms_rel_error))
    return fail(fmt::format("refused, the all_reduce model: {}", *why));
  // Each measured count is modelled with the all_reduce fit of its own level where there is one.
  auto fit_at = [&](const std::string& topo) -> const AlphaBetaFit& {
    const AlphaBetaFit* f = find_fit(fits, "all_reduce", topo);
    return f && f->ok ? *f : *fit;
  };
  // Overlap: the modelled all_reduce time of the step minus the measured exposed time, median over the
  // counts where some communication was exposed. Where none was, all of it was hidden: the overlap is
  // at least the largest modelled time, which is what the projection then assumes.
  std::vector<double> hidden;
  double fully_hidden = 0;
  bool any_exposed_metric = false;
  for (const ResultRow* r : rows) {
    const auto exposed = number_field(*r, fields::exposed_comm_us);
    if (r->gpu_count < 2 || !exposed) continue;
    any_exposed_metric = true;
    const double comm = bucketed_allreduce_us(fit_at(r->topology), r->gpu_count, d.gradient_bytes, d.bucket_bytes);
    if (*exposed > 0) hidden.push_back(comm - *exposed);
    else fully_hidden = std::max(fully_hidden, comm);
  }
  if (!any_exposed_metric) return fail("dp-step rows at >= 2 GPUs lack metrics.exposed_comm_us");
  d.hidden_us = std::max(0.0, hidden.empty() ? fully_hidden : median_of(hidden));
  auto step_at = [&](const AlphaBetaFit& f, int n) {
    return d.compute_us + std::max(0.0, bucketed_allreduce_us(f, n, d.gradient_bytes, d.bucket_bytes) - d.hidden_us);
  };
  std::vector<std::pair<double, double>> errs;
  for (const ResultRow* r : rows)
    if (r->gpu_count >= 2)
      errs.emplace_back(step_at(fit_at(r->topology), r->gpu_count), *number_field(*r, fields::step_time_us));
  d.rms_rel_error = rms_rel(errs);
  if (auto why = projection_refusal(counts.size(), d.rms_rel_error)) return fail(fmt::format("refused, the step model: {}", *why));
  for (int n : targets) d.predicted.push_back({n, step_at(*fit, n), step1 / step_at(*fit, n)});
  d.ok = true;
  return d;
}

}  // namespace

// The fits first: the collectives' projections and dp-step's both read them.
Projection project(const LoadedResult& run) {
  Projection p;
  for (const auto& r : run.rows) p.largest_count = std::max(p.largest_count, r.gpu_count);
  p.targets = {2 * p.largest_count, 4 * p.largest_count};
  p.fits = fit_levels(run.rows);
  for (const auto& f : p.fits) {  // each collective once, at the level of its largest count
    if (std::any_of(p.collectives.begin(), p.collectives.end(), [&](const auto& x) { return x.collective == f.collective; }))
      continue;
    p.collectives.push_back(project_collective(run.rows, f.collective, p.fits, p.targets));
  }
  for (const auto& [label, series] : dp_step_series(run.rows)) p.dp_steps.push_back(project_dp_step(label, series, p.fits, p.targets));
  return p;
}

std::string format_projection(const Projection& p) {
  std::string out = "\nPROJECTION (a model fitted to this run, not a measurement; docs/analysis.md)\n";
  if (p.fits.empty()) {
    out += "  no collective rows at 2 or more GPUs: nothing to fit\n";
  } else {
    out += "  alpha-beta fits, t = alpha x steps(n) + factor(n) x bytes / beta (ring algorithm):\n";
    out += fmt::format("  {:<15} {:<11} {:>10} {:>11} {:>7} {:>10}  {}\n", "collective", "level", "alpha us", "beta GB/s",
                       "points", "fit error", "GPU counts");
    for (const auto& f : p.fits) {
      std::string counts;
      for (int n : f.gpu_counts) counts += (counts.empty() ? "" : ",") + std::to_string(n);
      if (f.ok)
        out += fmt::format("  {:<15} {:<11} {:>10} {:>11} {:>7} {:>9.1f}%  {}\n", term_text(f.collective), f.topology,
                           figure_text(f.alpha_us), figure_text(f.beta_gbps), f.points, f.rms_rel_error * 100, counts);
      else
        out += fmt::format("  {:<15} {:<11} no fit: {}\n", term_text(f.collective), f.topology, f.why);
    }
    out += fmt::format("\n  projected busbw (GB/s) at the largest size, {} GPUs measured:\n", p.largest_count);
    out += fmt::format("  {:<15} {:<11} {:>8} {:>10} {:>10} {:>14} {:>14}  {}\n", "collective", "level", "size", "measured",
                       "model", fmt::format("PROJ. {} GPUs", p.targets[0]), fmt::format("PROJ. {} GPUs", p.targets[1]),
                       "fit error");
    for (const auto& c : p.collectives) {
      if (!c.fit.ok) {
        out += fmt::format("  {:<15} {:<11} not projected: {}\n", term_text(c.collective), c.topology,
                           c.fit.why.empty() ? "no fit at this level" : c.fit.why);
        continue;
      }
      auto eff = [&](double v) { return c.link_peak ? fmt::format(" ({:.0f}%)", v / *c.link_peak * 100) : std::string(); };
      out += fmt::format("  {:<15} {:<11} {:>8} {:>10} {:>10} {:>14} {:>14}  {:.1f}% RMS over {} points\n",
                         term_text(c.collective), c.topology, format_size(static_cast<std::uint64_t>(c.size_bytes)),
                         c.measured_busbw ? figure_text(*c.measured_busbw) : "-",
                         figure_text(model_busbw(c.fit, c.measured_n, c.size_bytes)),
                         figure_text(c.predicted_busbw[0]) + eff(c.predicted_busbw[0]),
                         figure_text(c.predicted_busbw[1]) + eff(c.predicted_busbw[1]), c.fit.rms_rel_error * 100,
                         c.fit.points);
    }
    out += fmt::format("  assumes the {}-GPU level (alpha, beta) holds at {} and {} GPUs; (%) = of the link peak\n",
                       p.largest_count, p.targets[0], p.targets[1]);
  }
  if (p.dp_steps.empty()) {
    out += "\n  dp-step: no dp-step rows in this file: no training-step projection\n";
  }
  for (const auto& d : p.dp_steps) {
    out += fmt::format("\n  dp-step {}: ", term_text(d.series));
    if (!d.ok) {
      out += "not projected: " + d.why + "\n";
      continue;
    }
    out += fmt::format("compute {} us, gradients {} in buckets of {}, overlap hides {} us\n", figure_text(d.compute_us),
                       format_size(static_cast<std::uint64_t>(d.gradient_bytes)),
                       d.bucket_bytes > 0 ? format_size(static_cast<std::uint64_t>(d.bucket_bytes)) : "one",
                       figure_text(d.hidden_us));
    for (const auto& m : d.measured)
      out += fmt::format("    {:>5} GPUs  measured  step {:>10} us  efficiency {:.1f}%\n", m.gpu_count, figure_text(m.step_time_us),
                         m.efficiency * 100);
    for (const auto& m : d.predicted)
      out += fmt::format("    {:>5} GPUs  PROJECTED step {:>10} us  efficiency {:.1f}%  (fit error {:.1f}% RMS)\n",
                         m.gpu_count, figure_text(m.step_time_us), m.efficiency * 100, d.rms_rel_error * 100);
  }
  return out;
}

}  // namespace gpuscale
