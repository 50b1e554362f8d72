// train-step: a transformer's training step under a parallel layout (training/train_step_plan.h) at
// every GPU count the layout divides, through the backend's own GEMMs and collectives: each rank runs
// its program, the GEMMs of its shard and each pattern's collective on a communicator of its group
// (TP, FSDP, DP, EP, expert DP, PP), one after another. The row's value is the group's tokens/s, its
// fraction of peak the MFU, and its metrics the time of each phase on the slowest rank.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "backends/backend.h"
#include "core/error.h"
#include "core/stats.h"
#include "core/term_text.h"
#include "core/units.h"
#include "harness/benchmarks/defaults.h"
#include "harness/benchmarks/train_step/train_step_measure.h"
#include "harness/registry.h"
#include "results/result_io.h"
#include "training/train_step_plan.h"
#include "text/number_text.h"

namespace gpuscale {
namespace {

constexpr std::uintmax_t kModelFileBytes = 1 << 20;

struct TrainPoint {
  ModelSpec model;
  LayoutSpec layout;
  bool strong = false;  // the global batch held at global_dp data-parallel ranks' (gradient accumulation)
  int global_dp = 0;
};

// Strong scaling's gradient accumulation at a resolved layout: global_dp / D, or 0 where D does not divide it.
// At most this many: a step of more passes than that is not a training step anyone runs at that count.
constexpr int kMaxAccumulation = 64;
int accumulation_of(const TrainPoint& p, const ParallelLayout& l) {
  if (!p.strong) return 1;
  const int a = p.global_dp % l.data_parallel() == 0 ? p.global_dp / l.data_parallel() : 0;
  return a <= kMaxAccumulation ? a : 0;
}

BenchmarkInfo train_step_info() {
  BenchmarkInfo info{"train-step",
                     "training",
                     "a transformer training step (dense or MoE) under a dp x fsdp x tp x pp x ep layout: its GEMMs "
                     "and each pattern's collectives; tokens/s, MFU and the time of each phase (docs/training.md)",
                     "tokens/s",
                     Scope::collective,
                     Efficiency::weak_scaling,
                     {{"name", "the model preset (llama3-8b, llama3-70b, mixtral-8x7b) or file (--model)"},
                      {"layout", "the parallel layout (--layout): dp, fsdp, tp=K, pp=K, ep=K"},
                      {"scaling", "weak, or strong with global_dp: the data-parallel ranks whose batch is held (--scaling)"},
                      {"layers, hidden, ffn, heads, kv_heads, seq, micro_batch, vocab, dtype, experts, top_k",
                       "the model's shapes after --quick and --layers; shrunk_from: what they changed"}},
                     {"cpu", "cuda"}};
  info.opt_in = true;  // a model's step is minutes at full size: named, not in every run
  return info;
}

ModelSpec load_model(const std::string& name) {
  if (auto m = model_preset(name)) return *m;
  if (name.find('/') == std::string::npos && name.find(".json") == std::string::npos)
    throw Error(fmt::format("--model '{}' is neither a preset ({}) nor a JSON file", terminal_quote(name),
                            fmt::join(model_preset_names(), ", ")));
  return model_from_json(read_json_file(name, kModelFileBytes), terminal_quote(name));
}

// The data-parallel ranks of the layout at the largest GPU count of the launch it runs at: strong
// scaling holds that count's global batch at every smaller one.
int largest_data_parallel(const LayoutSpec& spec, int world_size) {
  for (int n = world_size; n >= 1; --n)
    if (const auto l = resolve_layout(spec, n)) return l->data_parallel();
  return 1;
}

std::string bytes_text(double b) { return format_bytes(static_cast<std::uint64_t>(std::max(b, 0.0))); }

class TrainStepBenchmark final : public PointBenchmark<TrainPoint> {
 public:
  TrainStepBenchmark() : PointBenchmark(train_step_info()) {}

  TrainPoint point(const nlohmann::json& params) const override {
    TrainPoint p;
    std::string why;
    const auto layout = parse_layout(params.at("layout").get<std::string>(), why);
    if (!layout) throw Error(fmt::format("a train-step plan point: {}", why));
    p.layout = *layout;
    p.strong = params.value("scaling", std::string("weak")) == "strong";
    p.global_dp = params.value("global_dp", 0);
    if (p.strong && p.global_dp < 1) throw Error("a train-step plan point: strong scaling without global_dp");
    p.model = model_from_point(params, "a train-step plan point");
    return p;
  }

  // Each model at each layout the launch can hold. Layouts given with --layout apply to every model
  // that can take them (ep=4 to the MoE models of a list, say); one that no given model can take is
  // refused with its first reason, as is a model that fits no GPU count. Default layouts a launch
  // cannot hold are left out.
  std::vector<nlohmann::json> cases(const PlanContext& ctx) const override {
    const bool given = !ctx.opts.layouts.empty();
    std::vector<nlohmann::json> out;
    std::vector<std::string> first_refusal(ctx.opts.layouts.size());
    std::vector<bool> taken(ctx.opts.layouts.size(), false);
    for (const auto& name : ctx.opts.models.empty() ? std::vector<std::string>{"llama3-8b", "mixtral-8x7b"} : ctx.opts.models) {
      ModelSpec m = shrink_model(load_model(name), ctx.opts.quick, ctx.opts.layers);
      m.dtype = ctx.opts.dtypes.empty() ? (ctx.backend == "cpu" ? DType::fp32 : m.dtype) : ctx.opts.dtypes.front();
      if (auto why = ctx.device.gemm_unsupported(m.dtype)) throw Error(fmt::format("train-step {}: {}", m.name, *why));
      std::vector<std::string> layouts = ctx.opts.layouts;
      if (!given) layouts = !m.layout.empty() ? std::vector<std::string>{m.layout}
                            : m.moe()          ? std::vector<std::string>{"ep=4", "ep=8"}
                                               : std::vector<std::string>{"dp", "fsdp", "tp=2", "pp=2"};
      for (std::size_t i = 0; i < layouts.size(); ++i) {
        std::string why;
        const auto spec = parse_layout(layouts[i], why);
        if (!spec) throw Error(fmt::format("--layout '{}': {}", terminal_quote(layouts[i]), why));
        if (auto refusal = layout_refusal(*spec, m, ctx.world_size, ctx.gpus_per_node)) {
          if (given && first_refusal[i].empty()) first_refusal[i] = fmt::format("train-step {}: {}", m.name, *refusal);
          continue;
        }
        refuse_unless_it_fits(m, *spec, ctx);
        if (given) taken[i] = true;
        for (const auto& scaling : ctx.opts.scalings.empty() ? std::vector<std::string>{"weak"} : ctx.opts.scalings) {
          auto p = model_json(m);
          p["layout"] = spec->text();
          p["scaling"] = scaling;
          if (scaling == "strong") p["global_dp"] = largest_data_parallel(*spec, ctx.world_size);
          out.push_back(std::move(p));
        }
      }
    }
    for (std::size_t i = 0; i < taken.size(); ++i)
      if (!taken[i]) throw Error(first_refusal[i]);
    return out;
  }

  // One point on this rank's group: skipped where it cannot run at this count, else its
  // communicators, GEMMs and collectives prepared, the steps timed and checked
  // (harness/benchmarks/train_step/train_step_measure.h), and the row's figures.
  RankMeasurement measure(const TrainPoint& point, RunContext& ctx) const override {
    RankMeasurement out;
    const int n = ctx.group.size();
    const auto l = resolve_layout(point.layout, n);
    if (auto why = skip_reason(point, l, n, ctx.device)) {
      out.skipped = true;
      out.message = *why;
      return out;
    }
    if (ctx.backend == nullptr) throw Error("train-step needs a backend", 1);
    const auto plan = make_train_step_plan(point.model, *l, ctx.group.rank(), accumulation_of(point, *l));
    const StepComms comms = open_step_comms(*l, ctx);
    if (auto why = unsupported_step_collective(plan, comms, point.model.dtype, ctx)) {
      out.skipped = true;
      out.message = *why;
      return out;
    }
    StepWork work = prepare_step(plan, comms, point.model.dtype, ctx, key());
    const StepTimes times = time_steps(plan, work, comms, ctx, dp_methodology(ctx.opts));
    const StepCheck check = verify_step(plan, work, ctx.group);

    const auto f = train_figures(plan, median_of(times.group_step), median_of(times.slowest_phase[0]));
    out.reps = times.mine_rate;  // this rank's tokens/s per GPU from its own step: where stragglers show
    out.aggregate = f.tokens_per_s;
    out.metrics = {{"wrong", check.wrong}, {"checked", check.checked}, {"step_time_us", median_of(times.mine_step) * 1e6}};
    out.row_metrics = step_row_metrics(plan, times, f, train_memory_bytes(point.model, *l), check.wrong_total);
    if (comms.init_s > 0) out.row_metrics["init_s"] = comms.init_s;  // its own communicators (row_measure adds the count's)
    if (check.wrong_total > 0) {
      out.valid = false;
      out.message = fmt::format("{} wrong values across {} ranks ({} here)", check.wrong_total, n, check.wrong);
    }
    return out;
  }

  // What a rank allocates at the largest group: each distinct GEMM's operands and each collective's
  // buffers (the model's own memory is checked against the device in cases() and measure()).
  PointDemand demand_of(const TrainPoint& p, const DemandContext& ctx) const override {
    PointDemand d;
    const auto m = dp_methodology(ctx.opts);
    const double steps = m.warmup + m.reps + 1.0;
    // The most of each at the largest count the layout runs at and at its smallest (strong scaling's
    // smallest count runs the most passes, a weak step's largest the widest collectives).
    std::vector<ParallelLayout> counts;
    for (int n = std::max(ctx.ranks, 1); n >= 1 && counts.empty(); --n)
      if (const auto l = resolve_layout(p.layout, n); l && accumulation_of(p, *l) > 0) counts.push_back(*l);
    for (int n = 1; n <= ctx.ranks && counts.size() < 2; ++n)
      if (const auto l = resolve_layout(p.layout, n); l && accumulation_of(p, *l) > 0) counts.push_back(*l);
    for (const auto& at : counts) {
      const ParallelLayout* l = &at;
      const auto plan = make_train_step_plan(p.model, *l, 0, accumulation_of(p, *l));
      const std::uint64_t es = dtype_size(p.model.dtype);
      std::uint64_t memory = 0;
      for (const auto& g : plan.gemms)
        memory = saturating_add(memory, saturating_mul(g.shape.m * g.shape.k + g.shape.k * g.shape.n + g.shape.m * g.shape.n, es));
      double comm_bytes = 0;
      for (const auto& c : plan.comms) {
        memory = saturating_add(memory, saturating_mul(c.bytes, 2 * std::max(layout_group_size(*l, c.group), 1)));
        comm_bytes += static_cast<double>(c.bytes);
      }
      d.memory_bytes = std::max(d.memory_bytes, memory);
      // One communicator per layout dimension of 2 or more ranks (open_step_comms), alive together.
      int comms = 0;
      for (const LayoutDim dim : kTrainDims) comms += layout_group_size(*l, dim) >= 2 ? 1 : 0;
      d.communicators = std::max(d.communicators, comms);
      d.flops = std::max(d.flops, plan.gemm_flops * steps);
      d.bytes = std::max(d.bytes, comm_bytes * steps * static_cast<double>(plan.program.size()));
    }
    d.memory_what = fmt::format("the GEMM operands and collective buffers of {} in layout {}", p.model.name, p.layout.text());
    if (ctx.backend == "cuda") d.transport_timeout_s = ctx.opts.backend_options.timeout_s;
    return d;
  }

  // Tokens/s one device would reach at its dense peak for the dtype: the row's fraction of peak is then
  // the model FLOP utilisation (MFU) of the group.
  ExpectedPeak peak_of(const TrainPoint& p, const PeakContext& ctx, const std::string&) const override {
    if (ctx.table == nullptr) return {std::nullopt, "no peak table on this backend"};
    const auto peak = ctx.table->compute(ctx.device, p.model.dtype);
    if (!peak.value) return {std::nullopt, peak.source};
    const double per_token = train_flops_per_token(p.model);
    return {*peak.value * 1e12 / per_token,
            fmt::format("dense {} peak ({}) / {} FLOP per token", dtype_name(p.model.dtype), peak.source, figure_text(per_token))};
  }

 private:
  // Why the point does not run at a group of n (nullopt: it runs): the layout does not divide n,
  // strong scaling's batch cannot be held at n, or the model does not fit the device at n. A fact of
  // the count, not a failure: the row is skipped, and the other counts run.
  static std::optional<std::string> skip_reason(const TrainPoint& point, const std::optional<ParallelLayout>& l, int n,
                                                const Device& device) {
    if (!l) {
      int step = 1;  // the GPU counts it fits are the multiples of the smallest
      while (!resolve_layout(point.layout, step)) ++step;
      return fmt::format("layout {} runs on multiples of {} GPUs, not on {}", point.layout.text(), step, n);
    }
    if (accumulation_of(point, *l) == 0)
      return point.global_dp % l->data_parallel() != 0
                 ? fmt::format("strong scaling holds the batch of {} data-parallel ranks, which {} do not divide",
                               point.global_dp, l->data_parallel())
                 : fmt::format("strong scaling holds the batch of {} data-parallel ranks: {} would each run more "
                               "than {} micro-batch passes a step",
                               point.global_dp, l->data_parallel(), kMaxAccumulation);
    const double need = train_memory_bytes(point.model, *l);
    const auto usable = static_cast<double>(device.info().usable_memory_bytes());
    if (need > usable)
      return fmt::format("at {} GPUs the model needs {} per GPU, {} over what the device has ({})", n, bytes_text(need),
                         bytes_text(need - usable), device.info().usable_memory_text());
    return std::nullopt;
  }

  static void refuse_unless_it_fits(const ModelSpec& m, const LayoutSpec& spec, const PlanContext& ctx) {
    const double usable = static_cast<double>(ctx.device.info().usable_memory_bytes());
    double least = -1;
    for (int n = 1; n <= ctx.world_size; ++n)
      if (const auto l = resolve_layout(spec, n)) {
        const double need = train_memory_bytes(m, *l);
        if (need <= usable) return;
        least = least < 0 ? need : std::min(least, need);
      }
    throw Error(fmt::format("train-step {} in layout {} does not fit: it needs at least {} per GPU, {} more than the "
                            "device has ({}); shrink it with --quick or --layers, or spread it with fsdp, tp or pp",
                            m.name, spec.text(), bytes_text(least), bytes_text(least - usable),
                            ctx.device.info().usable_memory_text()));
  }
};

}  // namespace

void register_train_step_benchmark(Registry& r) { r.add(std::make_unique<TrainStepBenchmark>()); }

}  // namespace gpuscale
