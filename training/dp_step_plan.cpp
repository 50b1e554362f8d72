#include <algorithm>
#include <climits>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "core/units.h"
#include "training/dp_step.h"

namespace gpuscale {

std::vector<DpBucket> dp_buckets(int depth, std::uint64_t layer_elems, std::uint64_t element_size,
                                 std::uint64_t bucket_bytes) {
  std::vector<DpBucket> out;
  const std::uint64_t layer_bytes = layer_elems * element_size;
  std::uint64_t offset = 0;
  for (int l = depth - 1; l >= 0; --l) {
    const bool fits = !out.empty() && (out.back().elems * element_size + layer_bytes <= bucket_bytes);
    if (!fits) out.push_back({{}, offset, 0});
    out.back().layers.push_back(l);
    out.back().elems += layer_elems;
    offset += layer_elems;
  }
  return out;
}

DpPlan make_dp_plan(const DpStepConfig& c) {
  if (c.width == 0 || c.depth <= 0 || c.batch == 0)
    throw Error(fmt::format("invalid dp-step model: width {}, depth {}, batch {} (each must be positive)", c.width,
                            c.depth, c.batch));
  if (c.bucket_bytes == 0) throw Error("invalid dp-step bucket size 0: must be positive");
  if (c.width > static_cast<std::uint64_t>(INT_MAX) || c.batch > static_cast<std::uint64_t>(INT_MAX))
    throw Error(fmt::format("dp-step width {} or batch {} exceeds the 32-bit GEMM interface", c.width, c.batch));
  DpPlan p;
  p.config = c;
  const std::uint64_t d = c.width, b = c.batch, layer = d * d;
  const int L = c.depth;
  p.gradient_elems = layer * static_cast<std::uint64_t>(L);
  p.buckets = dp_buckets(L, layer, dtype_size(c.dtype), c.bucket_bytes);
  p.grad_offset.assign(static_cast<std::size_t>(L), 0);
  for (const auto& bucket : p.buckets)
    for (std::size_t i = 0; i < bucket.layers.size(); ++i)
      p.grad_offset[static_cast<std::size_t>(bucket.layers[i])] = bucket.offset_elems + i * layer;

  auto add_gemm = [&](DpGemm g) {
    p.program.push_back({DpOp::gemm, static_cast<int>(p.gemms.size())});
    p.flops_per_step += gemm_flops(g.shape);
    p.gemms.push_back(g);
  };
  for (int l = 0; l < L; ++l)
    add_gemm({DpGemmKind::forward, l, GemmShape{d, b, d, false, false, true}, {DpArray::weight, l},
              {DpArray::activation, l}, {DpArray::activation, l + 1}});
  for (int l = L - 1; l >= 0; --l) {
    add_gemm({DpGemmKind::weight_grad, l, GemmShape{d, d, b, false, true, true}, {DpArray::grad_output, l + 1},
              {DpArray::activation, l}, {DpArray::weight_grad, l}});
    for (std::size_t bi = 0; bi < p.buckets.size(); ++bi)
      if (p.buckets[bi].layers.back() == l) p.program.push_back({DpOp::all_reduce, static_cast<int>(bi)});
    if (l > 0)
      add_gemm({DpGemmKind::input_grad, l, GemmShape{d, b, d, true, false, true}, {DpArray::weight, l},
                {DpArray::grad_output, l + 1}, {DpArray::grad_output, l}});
  }
  return p;
}

std::uint64_t dp_memory_bytes(const DpStepConfig& c) {
  const std::uint64_t es = dtype_size(c.dtype), d = c.width, b = c.batch, L = static_cast<std::uint64_t>(c.depth);
  const long double total = static_cast<long double>(es) *
                            (2.0L * L * d * d + (2.0L * L + 1) * static_cast<long double>(d) * b);
  return total >= static_cast<long double>(UINT64_MAX) ? UINT64_MAX : static_cast<std::uint64_t>(total);
}

double dp_flops_per_sample(const DpStepConfig& c) {
  const double d = static_cast<double>(c.width);
  return 2.0 * d * d * (3.0 * c.depth - 1);
}

double dp_weight_scale(std::uint64_t width) { return std::sqrt(3.0 / static_cast<double>(width)); }

DpFigures dp_figures(const DpPlan& plan, int ranks, double step_s, double compute_s, double comm_s) {
  DpFigures f;
  f.step_s = step_s;
  f.compute_s = compute_s;
  f.comm_s = comm_s;
  f.exposed_comm_s = std::max(0.0, step_s - compute_s);
  f.overlap = comm_s > 0 ? std::clamp(1.0 - f.exposed_comm_s / comm_s, 0.0, 1.0) : 1.0;
  if (step_s > 0) {
    f.samples_per_s = static_cast<double>(ranks) * static_cast<double>(plan.config.batch) / step_s;
    f.tflops = static_cast<double>(ranks) * plan.flops_per_step / step_s / 1e12;
  }
  return f;
}

std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> dp_sample_points(const DpPlan& plan,
                                                                                    std::uint64_t seed,
                                                                                    std::size_t count) {
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> out;
  for (std::size_t g = 0; g < plan.gemms.size(); ++g)
    out.push_back(gemm_sample_points(plan.gemms[g].shape, seed + 0x9e37 * (g + 1), count));
  return out;
}

CheckResult dp_check_gemms(const DpPlan& plan, const std::vector<DpGemmSample>& samples) {
  CheckResult r;
  for (const auto& s : samples) {
    const auto& g = plan.gemms.at(static_cast<std::size_t>(s.gemm));
    const auto e = check_gemm_entry(plan.config.dtype, g.shape.k, s.c, [&](std::uint64_t p) { return s.a.at(p); },
                                    [&](std::uint64_t p) { return s.b.at(p); });
    ++r.checked;
    r.max_error = std::max(r.max_error, e.error_ratio);
    if (!e.ok) {
      if (r.wrong == 0)
        r.detail = fmt::format("{} GEMM of layer {}: C[{},{}] = {} is outside tolerance ({:.3g}x)",
                               g.kind == DpGemmKind::forward       ? "forward"
                               : g.kind == DpGemmKind::weight_grad ? "weight-gradient"
                                                                   : "input-gradient",
                               g.layer, s.row, s.col, s.c, e.error_ratio);
      ++r.wrong;
    }
  }
  return r;
}

CheckResult dp_check_all_reduce(DType dtype, int nranks, const std::vector<double>& local,
                                const std::vector<double>& reduced) {
  CheckResult r;
  const std::size_t points = reduced.size();
  const double u = dtype_epsilon(dtype), n = nranks;
  for (std::size_t p = 0; p < points; ++p) {
    double sum = 0, magnitude = 0;
    for (int rank = 0; rank < nranks; ++rank) {
      const double v = local.at(static_cast<std::size_t>(rank) * points + p);
      sum += v;
      magnitude += std::fabs(v);
    }
    const double tol = (n + 1) * u * magnitude + n * dtype_min_subnormal(dtype);
    const double err = std::fabs(reduced[p] - sum);
    ++r.checked;
    const bool ok = err <= tol;  // NaN fails
    if (tol > 0) r.max_error = std::max(r.max_error, err / tol);
    if (!ok) {
      if (r.wrong == 0)
        r.detail = fmt::format("all-reduced gradient entry {} = {} but the ranks' gradients sum to {}", p, reduced[p], sum);
      ++r.wrong;
    }
  }
  return r;
}

CheckResult dp_check_step(const DpPlan& plan, const std::vector<DpGemmSample>& samples, int nranks,
                          const std::vector<double>& local, const std::vector<double>& reduced) {
  auto result = dp_check_gemms(plan, samples);
  const auto reduce = dp_check_all_reduce(plan.config.dtype, nranks, local, reduced);
  result.checked += reduce.checked;
  result.max_error = std::max(result.max_error, reduce.max_error);
  if (result.wrong == 0) result.detail = reduce.detail;
  result.wrong += reduce.wrong;
  return result;
}

}  // namespace gpuscale
