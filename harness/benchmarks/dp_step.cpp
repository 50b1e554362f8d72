// dp-step: the data-parallel training step (training/dp_step.h) at every GPU count, for weak scaling:
// each rank keeps its batch, so k GPUs should process k times the samples of one. The row's value is
// samples/s, its efficiency throughput(k) / (k x throughput(1)) of the same point, and its metrics the
// step, compute-only and communication-only times and the communication the GEMMs did not hide.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "backends/backend.h"
#include "core/fault.h"
#include "core/error.h"
#include "core/stats.h"
#include "core/units.h"
#include "harness/benchmarks/agreed_setup.h"
#include "harness/benchmarks/defaults.h"
#include "harness/benchmarks/work_place.h"
#include "harness/registry.h"
#include "text/number_text.h"

namespace gpuscale {
namespace {

std::vector<DType> dp_dtypes(const std::string& backend) {
  if (backend == "cpu") return {DType::fp32, DType::fp64};
  return {DType::bf16, DType::fp16, DType::fp32, DType::tf32, DType::fp64};
}

double max_of(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

BenchmarkInfo dp_step_info() {
  return {"dp-step",
          "training",
          "data-parallel training step: MLP GEMMs forward and backward, gradients all-reduced in buckets "
          "overlapping the backward pass (DDP-style); weak-scaling efficiency throughput(k) / (k x throughput(1))",
          "samples/s",
          Scope::collective,
          Efficiency::weak_scaling,
          {{"dtype", "bf16 on CUDA, fp32 on the CPU by default (--dtypes)"},
           {"width", "layer width d: weights d x d (--dp-width; 8192 CUDA, 1024 CPU)"},
           {"depth", "layers (--dp-depth; 4)"},
           {"batch", "samples per rank per step (--dp-batch; 8192 CUDA, 256 CPU)"},
           {"bucket_bytes", "gradient bucket cap (--dp-bucket; 25M CUDA as DDP, 8M CPU)"}},
          {"cpu", "cuda"}};
}

// A dp-step point is the step's own configuration (training/dp_step.h).
class DpStepBenchmark final : public PointBenchmark<DpStepConfig> {
 public:
  DpStepBenchmark() : PointBenchmark(dp_step_info()) {}

  DpStepConfig point(const nlohmann::json& params) const override {
    DpStepConfig c;
    c.dtype = parse_dtype_or_throw(params.at("dtype").get<std::string>());
    c.width = params.at("width").get<std::uint64_t>();
    c.depth = params.at("depth").get<int>();
    c.batch = params.at("batch").get<std::uint64_t>();
    c.bucket_bytes = params.at("bucket_bytes").get<std::uint64_t>();
    return c;
  }

  std::vector<nlohmann::json> cases(const PlanContext& ctx) const override {
    const auto supported = dp_dtypes(ctx.backend);
    std::vector<DType> types;
    for (DType t : ctx.opts.dtypes)
      if (std::find(supported.begin(), supported.end(), t) != supported.end()) types.push_back(t);
    if (ctx.opts.dtypes.empty()) types.push_back(supported.front());
    std::vector<nlohmann::json> out;
    const auto& dev = ctx.device.info();
    for (DType t : types) {
      const auto c = dp_step_config(ctx.opts, ctx.backend, t);
      const auto plan = make_dp_plan(c);  // a bad model is refused here, before anything runs
      const std::uint64_t need = dp_memory_bytes(c);
      if (need > dev.usable_memory_bytes())
        throw Error(fmt::format("dp-step width {} depth {} batch {} {} needs {} bytes per rank, but {} (lower "
                                "--dp-width or --dp-batch)",
                                c.width, c.depth, c.batch, dtype_name(t), need, dev.usable_memory_text()));
      out.push_back({{"dtype", dtype_name(t)},
                     {"width", c.width},
                     {"depth", c.depth},
                     {"batch", c.batch},
                     {"bucket_bytes", c.bucket_bytes}});
    }
    return out;
  }

  // The model's weights, gradients and activations; the GEMMs of every step (full and compute-only
  // passes) and the gradients' all-reduces (full and communication-only passes). On CUDA the buckets go
  // through NCCL, whose -T timeout the watchdog lets act first.
  PointDemand demand_of(const DpStepConfig& c, const DemandContext& ctx) const override {
    const auto m = dp_methodology(ctx.opts);
    const double steps = static_cast<double>(m.steps) * (m.warmup + 2.0 * m.reps);
    PointDemand d;
    d.memory_bytes = dp_memory_bytes(c);
    d.memory_what = fmt::format("the weights, gradients and activations of width {} depth {} batch {} {}", c.width,
                                c.depth, c.batch, dtype_name(c.dtype));
    d.flops = dp_flops_per_sample(c) * static_cast<double>(c.batch) * steps;
    d.bytes = 2.0 * static_cast<double>(make_dp_plan(c).gradient_elems * dtype_size(c.dtype)) * steps;  // ring: ~2x
    if (ctx.backend == "cuda") d.transport_timeout_s = ctx.opts.backend_options.timeout_s;
    return d;
  }

  RankMeasurement measure(const DpStepConfig& c, RunContext& ctx) const override {
    const auto plan = make_dp_plan(c);
    if (ctx.backend == nullptr || ctx.comm == nullptr) throw Error("dp-step needs a backend and a communicator", 1);
    decltype(ctx.backend->make_dp_step(c, ctx.group, *ctx.comm, ctx.seed)) step;
    agreed_setup(ctx.group, key(), [&] { step = ctx.backend->make_dp_step(c, ctx.group, *ctx.comm, ctx.seed); });
    const auto m = dp_methodology(ctx.opts);
    const int n = ctx.group.size();
    if (m.warmup > 0) step->time(DpMode::full, m.warmup);
    std::vector<double> mine_full, mine_rate, group_rate, step_s, compute_s, comm_s;
    const WorkPlace place = comm_work_place(ctx.group, ctx.hosts);
    for (int r = 0; r < m.reps; ++r) {
      // A planted slow GPU spends its time in the step's GEMMs (core/fault.h), where the others' gradient
      // all-reduce waits for it; slow-host-reported stretches the figures instead.
      const FaultScope planted(place);
      const double full = stretch_timed(step->time(DpMode::full, m.steps));
      const double compute = stretch_timed(step->time(DpMode::compute_only, m.steps));
      const double comm = stretch_timed(step->time(DpMode::comm_only, m.steps));
      mine_full.push_back(full);
      mine_rate.push_back(static_cast<double>(c.batch) / full);
      // A synchronous step ends when the slowest rank's does.
      step_s.push_back(max_of(ctx.group.allgather(full)));
      compute_s.push_back(max_of(ctx.group.allgather(compute)));
      comm_s.push_back(max_of(ctx.group.allgather(comm)));
      group_rate.push_back(static_cast<double>(n) * static_cast<double>(c.batch) / step_s.back());
    }
    const auto check = step->verify();
    const auto wrong_all = ctx.group.allgather(static_cast<double>(check.wrong));
    const double wrong_total = std::accumulate(wrong_all.begin(), wrong_all.end(), 0.0);

    RankMeasurement out;
    out.reps = mine_rate;  // this rank's samples/s from its own step time
    out.metrics = {{"wrong", check.wrong}, {"checked", check.checked}, {"step_time_us", median_of(mine_full) * 1e6}};
    const auto f = dp_figures(plan, n, median_of(step_s), median_of(compute_s), median_of(comm_s));
    out.aggregate = median_of(group_rate);
    nlohmann::json buckets = nlohmann::json::array();
    for (const auto& b : plan.buckets) buckets.push_back(b.elems * dtype_size(c.dtype));
    out.row_metrics = {{"step_time_us", f.step_s * 1e6},
                       {"compute_time_us", f.compute_s * 1e6},
                       {"comm_time_us", f.comm_s * 1e6},
                       {"exposed_comm_us", f.exposed_comm_s * 1e6},
                       {"overlap", f.overlap},
                       {"samples_per_s", *out.aggregate},
                       {"tflops", f.tflops},
                       {"flops_per_sample", dp_flops_per_sample(c)},
                       {"gradient_bytes", plan.gradient_elems * dtype_size(c.dtype)},
                       {"bucket_bytes_each", buckets},
                       {"steps_per_rep", m.steps},
                       {"time_reduce", "max"},
                       {"wrong", wrong_total},
                       {"implementation", step->details()}};
    if (wrong_total > 0) {
      out.valid = false;
      out.message = fmt::format("{} wrong values across {} ranks ({} here){}", wrong_total, n, check.wrong,
                                check.detail.empty() ? "" : ": " + check.detail);
    }
    return out;
  }

  // Samples/s one device would reach at its dense peak for the dtype: the row's fraction of peak is
  // then the model FLOP utilisation (MFU) of the group.
  ExpectedPeak peak_of(const DpStepConfig& c, const PeakContext& ctx, const std::string&) const override {
    if (ctx.table == nullptr) return {std::nullopt, "no peak table on this backend"};
    const DType t = c.dtype;
    const auto peak = ctx.table->compute(ctx.device, t);
    if (!peak.value) return {std::nullopt, peak.source};
    return {*peak.value * 1e12 / dp_flops_per_sample(c),
            fmt::format("dense {} peak ({}) / {} FLOP per sample", dtype_name(t), peak.source,
                        figure_text(dp_flops_per_sample(c)))};
  }
};

}  // namespace

void register_training_benchmarks(Registry& r) { r.add(std::make_unique<DpStepBenchmark>()); }

}  // namespace gpuscale
