// GEMM throughput: one registry entry, points over dtypes and shapes.
#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "core/units.h"

#include "harness/benchmarks/agreed_setup.h"
#include "harness/benchmarks/defaults.h"
#include "harness/benchmarks/independent.h"
#include "harness/registry.h"
#include "kernels/cuda/cuda_plan.h"

namespace gpuscale {
namespace {

std::vector<GemmShape> default_shapes(const PlanContext& ctx) {
  std::vector<std::uint64_t> sizes;
  if (ctx.opts.quick)
    sizes = {512};
  else if (ctx.backend == "cpu")
    sizes = {1024, 2048, 4096};
  else
    sizes = {1024, 2048, 4096, 8192, 16384};
  std::vector<GemmShape> out;
  for (auto s : sizes) out.push_back({s, s, s, false, false});
  return out;
}

// A GEMM point: the input type and the shape with its transposes.
struct GemmPoint {
  DType dtype;
  GemmShape shape;
};

BenchmarkInfo gemm_info() {
  return {"gemm",
          "gemm",
          "dense matrix multiply C = op(A) op(B), random inputs, 2MNK FLOPs per product, sampled entries "
          "checked against a long-double reference",
          "TFLOP/s",
          Scope::independent,
          Efficiency::per_device,
          {{"dtype", "fp64, fp32 (CPU); fp64, fp32, tf32, bf16, fp16, fp8_e4m3, int8 (CUDA) (--dtypes)"},
           {"m, n, k", "shape (--gemm-shapes 4096,8192x1024x4096; default square sweep)"},
           {"layout", "transposes of A and B, NN/TN/NT/TT (suffix :TN on a shape; without one NN, TN for fp8 and int8)"},
           {"fast_accum", "fp8 only: cuBLASLt's fast accumulation on (the mode NVIDIA's fp8 figures quote) or off; "
                          "one point each"}},
          {"cpu", "cuda"}};
}

class GemmBenchmark final : public PointBenchmark<GemmPoint> {
 public:
  GemmBenchmark() : PointBenchmark(gemm_info()) {}

  GemmPoint point(const nlohmann::json& params) const override {
    const auto layout = params.at("layout").get<std::string>();
    if (layout.size() != 2) throw Error(fmt::format("invalid GEMM layout '{}' in a plan point", terminal_quote(layout)));
    GemmPoint p{parse_dtype_or_throw(params.at("dtype").get<std::string>()),
                {params.at("m").get<std::uint64_t>(), params.at("n").get<std::uint64_t>(),
                 params.at("k").get<std::uint64_t>(), layout[0] == 'T', layout[1] == 'T'}};
    // Points of files written before the parameter existed ran without fast accumulation.
    p.shape.fast_accum = params.value("fast_accum", false);
    return p;
  }

  std::vector<nlohmann::json> cases(const PlanContext& ctx) const override {
    std::vector<DType> types;
    if (ctx.opts.dtypes.empty()) {
      types = ctx.device.gemm_dtypes();
    } else {
      for (DType t : ctx.opts.dtypes)
        if (dtype_used_by(t, kForGemm)) types.push_back(t);  // int32 is a collective type, not a GEMM input type
    }
    const auto shapes = ctx.opts.gemm_shapes.empty() ? default_shapes(ctx) : ctx.opts.gemm_shapes;
    std::vector<nlohmann::json> out;
    for (DType t : types)
      for (auto s : shapes) {
        s = gemm_shape_for(t, s);  // without a given layout: TN for fp8 and int8
        nlohmann::json pt = {{"dtype", dtype_name(t)}, {"m", s.m}, {"n", s.n}, {"k", s.k}, {"layout", gemm_layout(s)}};
        if (!gemm_has_fast_accum(t)) {
          out.push_back(pt);
          continue;
        }
        for (bool fast : {false, true}) {  // fp8: both accumulation modes, named in the row
          pt["fast_accum"] = fast;
          out.push_back(pt);
        }
      }
    return out;
  }

  // Its timed repetitions can take turns with other groups' (interleaved, harness/repetition_gate.h).
  std::optional<int> timed_repetitions(const nlohmann::json&, const RunOptions& opts) const override {
    return gemm_methodology(opts).reps;
  }

  RankMeasurement measure(const GemmPoint& p, RunContext& ctx) const override {
    const DType type = p.dtype;
    const GemmShape& s = p.shape;
    RankMeasurement out;
    if (auto why = ctx.device.gemm_unsupported(type)) {
      out.skipped = true;
      out.message = *why;
      return out;
    }
    if (auto why = ctx.device.gemm_shape_unsupported(type, s)) {
      out.skipped = true;
      out.message = *why;
      return out;
    }
    const auto m = gemm_methodology(ctx.opts);
    decltype(ctx.device.make_gemm(type, s, ctx.seed)) problem;
    agreed_setup(ctx.group, key(), [&] { problem = ctx.device.make_gemm(type, s, ctx.seed); });
    const double flops = gemm_flops(s);
    out.reps = time_independent(
        ctx.group, FaultSite::compute, m.warmup, m.reps, [&] { return problem->run(); }, [&](double sec) { return flops / sec / 1e12; },
        ctx.gate);
    out.metrics["implementation"] = problem->details();
    apply_check(out, problem->verify());
    return out;
  }

  // The datasheets' fp8 figures are for fast accumulation (cuBLASLt's FAST_ACCUM); with it off the
  // tensor cores' partial sums are promoted more often and no vendor figure is stated, so that row has
  // no % of peak rather than one against a peak of the other mode.
  ExpectedPeak peak_of(const GemmPoint& p, const PeakContext& ctx, const std::string&) const override {
    if (ctx.table == nullptr) return {std::nullopt, "no peaks table loaded"};
    auto peak = ctx.table->compute(ctx.device, p.dtype);
    if (gemm_has_fast_accum(p.dtype) && !p.shape.fast_accum && peak.value)
      return {std::nullopt, fmt::format("the {} peak ({:.0f} TFLOP/s) is quoted with fast accumulation; none is "
                                        "stated without it (the fast_accum=true row is judged against it)",
                                        dtype_name(p.dtype), *peak.value)};
    return peak;
  }

  // A, B and C (plus cuBLASLt's workspace on CUDA); the products of warm-up, timing and, on CUDA, the
  // timed choice among the heuristic's candidates.
  PointDemand demand_of(const GemmPoint& p, const DemandContext& ctx) const override {
    const DType type = p.dtype;
    const GemmShape& s = p.shape;
    const bool cuda = ctx.backend == "cuda";
    const auto m = gemm_methodology(ctx.opts);
    PointDemand d;
    d.memory_bytes = cuda ? cuda::gemm_device_bytes(type, s, cuda::kGemmWorkspaceBytes)
                          : cuda::gemm_device_bytes(type, s, 0);  // the same A, B and C, no workspace
    d.memory_what = fmt::format("A, B and C of {}x{}x{} {}{}", s.m, s.n, s.k, dtype_name(type),
                                cuda ? fmt::format(" and a {} MiB workspace", cuda::kGemmWorkspaceBytes >> 20) : "");
    d.flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) *
              (m.warmup + m.reps + (cuda ? cuda::kGemmCandidates : 0));
    return d;
  }
};

}  // namespace

void register_gemm_benchmarks(Registry& r) { r.add(std::make_unique<GemmBenchmark>()); }

}  // namespace gpuscale
