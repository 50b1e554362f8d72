// Burn-in windows (harness/benchmarks/burn/burn_plan.h, docs/acceptance.md): one registry entry per kind (burn.gemm,
// burn.stream, burn.all_reduce, burn.mix), each point one window of the burn-in's plan. A window loads
// the rank for its length and measures it in kBurnSlicesPerWindow slices, the row's repetitions: each
// slice's figure is its work over its timed seconds, so the sample stays bounded whatever one pass
// takes (a slice runs at least one pass; when passes outlast the slices, the window ends on time with
// fewer of them). The work is checked at the end of every window, as the benchmark it repeats checks it. Each
// window is measured once, at the job's full size (every GPU at once), and journalled when it ends, so a
// killed burn-in keeps every finished window.
#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "backends/backend.h"
#include "core/error.h"
#include "core/fault.h"
#include "core/stats.h"
#include "core/units.h"
#include "core/utc_time.h"
#include "harness/benchmarks/agreed_setup.h"
#include "harness/benchmarks/burn/burn_plan.h"
#include "harness/benchmarks/burn/burn_sdc.h"
#include "harness/benchmarks/burn/burn_work.h"
#include "harness/benchmarks/collective_plan.h"
#include "harness/benchmarks/independent.h"
#include "harness/benchmarks/work_place.h"
#include "harness/registry.h"
#include "kernels/gemm_spec.h"
#include "kernels/stream_table.h"

namespace gpuscale {
namespace {

using SteadyClock = std::chrono::steady_clock;

// A window: which of the burn-in's it is, and the work it repeats (as the point's params record it).
struct BurnPoint {
  BurnKind kind = BurnKind::mix;
  int window = 0;
  double seconds = 0;
  DType dtype = DType::fp64;
  std::uint64_t n = 0;           // GEMM: m = n = k
  std::uint64_t elements = 0;    // STREAM: elements per array
  std::uint64_t size_bytes = 0;  // all_reduce (mix: its all_reduce)
};

BenchmarkInfo burn_info(BurnKind kind) {
  const std::string name(burn_kind_name(kind));
  const bool collective = kind == BurnKind::all_reduce || kind == BurnKind::mix;
  std::string what;
  switch (kind) {
    case BurnKind::gemm: what = "square GEMMs back to back (compute, power, heat)"; break;
    case BurnKind::stream: what = "STREAM triad passes back to back (memory)"; break;
    case BurnKind::all_reduce: what = "all_reduce over every rank, back to back (links, NICs); busbw"; break;
    case BurnKind::mix:
      what = "a GEMM then an all_reduce, in turn (a training step's shape); the rank's GEMM TFLOP/s, the "
             "all_reduce's busbw as a metric";
      break;
  }
  BenchmarkInfo info{"burn." + name,
                     "burn",
                     fmt::format("burn-in window of {} (--duration, --burn {}, --window): {}; the window's "
                                 "{} slices are its repetitions, its work checked at its end",
                                 name, name, what, kBurnSlicesPerWindow),
                     kind == BurnKind::stream || kind == BurnKind::all_reduce ? "GB/s" : "TFLOP/s",
                     collective ? Scope::collective : Scope::independent,
                     Efficiency::per_device,
                     {{"kind", "the window's work (--burn)"},
                      {"window", "its place in the burn-in, from 0 (the windows take the kinds in turn)"},
                      {"start_s, window_s", "its planned start and length (--window)"},
                      {"dtype, n | elements | size_bytes | all_reduce_bytes", "the work's type and size"}},
                     {"cpu", "cuda"}};
  info.whole_job = true;  // every GPU at once, once
  info.opt_in = true;     // minutes to hours: only with --duration
  return info;
}

// One slice's timed loop: `pass` runs one pass and returns its seconds (a planted fault's time
// included); the loop ends when `done` says so (after at least one pass). The slice's figure is its
// work over its timed seconds.
template <typename Pass, typename Done>
double timed_slice(const Pass& pass, const Done& done, double work_per_pass) {
  double timed = 0, work = 0;
  do {
    timed += pass();
    work += work_per_pass;
  } while (!done());
  return timed > 0 ? work / timed : 0;
}

class BurnBenchmark final : public PointBenchmark<BurnPoint> {
 public:
  explicit BurnBenchmark(BurnKind kind) : PointBenchmark(burn_info(kind)), kind_(kind) {}

  BurnPoint point(const nlohmann::json& params) const override {
    BurnPoint p;
    p.kind = burn_kind_of(params.at("kind").get<std::string>());
    if (p.kind != kind_) throw Error(fmt::format("a {} point in {}'s plan", burn_kind_name(p.kind), key()));
    p.window = params.at("window").get<int>();
    p.seconds = params.at("window_s").get<double>();
    if (!(p.seconds > 0) || p.window < 0) throw Error(fmt::format("invalid {} window in a plan point", key()));
    p.dtype = parse_dtype_or_throw(params.at("dtype").get<std::string>());
    if (kind_ == BurnKind::gemm || kind_ == BurnKind::mix) p.n = params.at("n").get<std::uint64_t>();
    if (kind_ == BurnKind::stream) p.elements = params.at("elements").get<std::uint64_t>();
    if (kind_ == BurnKind::all_reduce) p.size_bytes = params.at("size_bytes").get<std::uint64_t>();
    if (kind_ == BurnKind::mix) p.size_bytes = params.at("all_reduce_bytes").get<std::uint64_t>();
    return p;
  }

  std::vector<nlohmann::json> cases(const PlanContext& ctx) const override {
    if (ctx.opts.burn_duration_s <= 0)
      throw Error(fmt::format("{} is a burn-in window: run it with --duration (and --burn {})", key(), burn_kind_name(kind_)));
    const auto kinds = burn_kinds_or_default(ctx.opts.burn_kinds);
    if (std::find(kinds.begin(), kinds.end(), kind_) == kinds.end()) return {};  // not one of --burn's kinds
    const auto plan = make_burn_plan(ctx.opts.burn_duration_s, ctx.opts.burn_window_s.value_or(kDefaultBurnWindowS), kinds);
    const BurnWork w = burn_work(ctx);
    std::vector<nlohmann::json> out;
    for (const auto& win : plan.windows) {
      if (win.kind != kind_) continue;
      nlohmann::json p = {{"kind", burn_kind_name(kind_)}, {"window", win.index}, {"start_s", win.start_s},
                          {"window_s", win.seconds}};
      switch (kind_) {
        case BurnKind::gemm: p.update({{"dtype", dtype_name(w.gemm_dtype)}, {"n", w.gemm_n}}); break;
        case BurnKind::stream:
          p.update({{"dtype", dtype_name(w.stream_dtype)}, {"elements", w.stream_elements},
                    {"array_bytes", w.stream_elements * dtype_size(w.stream_dtype)}});
          break;
        case BurnKind::all_reduce: p.update({{"dtype", "fp32"}, {"size_bytes", w.all_reduce_bytes}}); break;
        case BurnKind::mix:
          p.update({{"dtype", dtype_name(w.gemm_dtype)}, {"n", w.gemm_n}, {"all_reduce_bytes", w.all_reduce_bytes}});
          break;
      }
      out.push_back(std::move(p));
    }
    return out;
  }

  RankMeasurement measure(const BurnPoint& p, RunContext& ctx) const override {
    const std::string started = utc_timestamp(std::chrono::system_clock::now());
    const auto began = SteadyClock::now();
    RankMeasurement out;
    switch (kind_) {
      case BurnKind::gemm: out = measure_gemm(p, ctx, false); break;
      case BurnKind::mix: out = measure_gemm(p, ctx, true); break;
      case BurnKind::stream: out = measure_stream(p, ctx); break;
      case BurnKind::all_reduce: out = measure_all_reduce(p, ctx); break;
    }
    // When the window ran, on the wall clock: the time series' axis beside the planned start_s.
    out.metrics["window_start_utc"] = started;
    out.metrics["window_wall_s"] = std::chrono::duration<double>(SteadyClock::now() - began).count();
    if (kind_ == BurnKind::mix) {
      // The group's figure of a mix window: the sum of its ranks' GEMM medians, as an independent row's
      // aggregate is (every member takes part, a skipped one with 0).
      double sum = 0;
      for (double v : ctx.group.allgather(out.reps.empty() ? 0.0 : median_of(out.reps))) sum += v;
      out.aggregate = sum;
    }
    return out;
  }

  ExpectedPeak peak_of(const BurnPoint& p, const PeakContext& ctx, const std::string&) const override {
    if (ctx.table == nullptr) return {std::nullopt, "no peaks table loaded"};
    switch (kind_) {
      case BurnKind::gemm:
      case BurnKind::mix: return ctx.table->compute(ctx.device, p.dtype);
      case BurnKind::stream: return ctx.table->memory_bandwidth(ctx.device);
      case BurnKind::all_reduce: break;
    }
    return {std::nullopt, "a burn-in's all_reduce is judged by its drift over the windows, not a link peak"};
  }

  // The window's buffers; its length is its cost on any device (fixed_s: the plan's estimate and the
  // watchdog's budget, 10 windows or at least its floor).
  PointDemand demand_of(const BurnPoint& p, const DemandContext& ctx) const override {
    PointDemand d;
    const std::uint64_t gemm_bytes = saturating_mul(3, saturating_mul(p.n, saturating_mul(p.n, dtype_size(p.dtype))));
    switch (kind_) {
      case BurnKind::gemm: d = {gemm_bytes, fmt::format("A, B and C of {}", format_bytes(gemm_bytes))}; break;
      case BurnKind::stream: d = buffers_demand(3, "arrays", saturating_mul(p.elements, dtype_size(p.dtype)), ctx.opts); break;
      case BurnKind::all_reduce:
        d = {saturating_mul(2, p.size_bytes), fmt::format("send and receive buffers of {}", format_bytes(p.size_bytes))};
        break;
      case BurnKind::mix:
        d = {saturating_add(gemm_bytes, saturating_mul(2, p.size_bytes)),
             fmt::format("GEMM operands of {} and all_reduce buffers of {}", format_bytes(gemm_bytes),
                         format_bytes(2 * p.size_bytes))};
        break;
    }
    d.bytes = 0;
    d.flops = 0;
    d.fixed_s = p.seconds;
    if (ctx.backend == "cuda" && (kind_ == BurnKind::all_reduce || kind_ == BurnKind::mix))
      d.transport_timeout_s = ctx.opts.backend_options.timeout_s;
    return d;
  }

 private:
  // GEMM windows, and mix: a GEMM pass then (mix) one all_reduce of the window's size, in turn. Each
  // slice's figure is this rank's GEMM TFLOP/s alone, so a slow GPU is told from the peers it makes wait.
  RankMeasurement measure_gemm(const BurnPoint& p, RunContext& ctx, bool mix) const {
    RankMeasurement out;
    const GemmShape shape = burn_gemm_shape(p.dtype, p.n);  // its type's layout, a fixed algorithm
    auto cannot = ctx.device.gemm_unsupported(p.dtype);
    if (!cannot) cannot = ctx.device.gemm_shape_unsupported(p.dtype, shape);  // the rule the gemm benchmark applies
    if (cannot) {
      out.skipped = true;
      out.message = *cannot;
      return out;
    }
    decltype(ctx.device.make_gemm(p.dtype, shape, ctx.seed)) problem;
    std::unique_ptr<CollectiveRunner> runner;
    CollectiveCase c = all_reduce_case(p, ctx);
    if (mix) {
      if (ctx.comm == nullptr) throw Error("burn.mix needs a communicator", 1);
      if (auto why = ctx.comm->unsupported(c)) {
        out.skipped = true;
        out.message = *why;
        return out;
      }
    }
    agreed_setup(ctx.group, key(), [&] {
      problem = ctx.device.make_gemm(p.dtype, shape, ctx.seed);
      if (mix) runner = ctx.comm->prepare(c);
    });
    (void)problem->run();  // warm-up, untimed
    const double flops = gemm_flops(shape);
    const WorkPlace place = comm_work_place(ctx.group, ctx.hosts);
    std::vector<double> busbw;
    const auto slice_s = p.seconds / kBurnSlicesPerWindow;
    ctx.group.barrier();
    const auto start = SteadyClock::now();
    const auto window_end = start + std::chrono::duration<double>(p.seconds);
    for (int s = 0; s < kBurnSlicesPerWindow; ++s) {
      // Passes longer than a slice would stretch the window: it ends on time, with fewer slices (mix:
      // the group agrees, as every rank must run as many all_reduces).
      const bool over = SteadyClock::now() >= window_end;
      if (s > 0 && (mix ? ctx.group.first_failed(over) >= 0 : over)) break;
      const auto end = start + std::chrono::duration<double>(slice_s * (s + 1));
      double comm_s = 0;
      int comm_ops = 0;
      const auto pass = [&] {
        double t = 0;
        {
          const FaultScope planted(WorkPlace{});
          t = problem->run();
          t = stretch_timed(t + spend_planted(FaultSite::compute, t));
        }
        if (mix) {
          const FaultScope planted(place);
          comm_s += runner->time(1);
          ++comm_ops;
        }
        return t;
      };
      // mix: every rank passes as often (the all_reduce needs them all), so the group agrees when to stop.
      const auto done = [&] { return mix ? ctx.group.first_failed(SteadyClock::now() >= end) >= 0 : SteadyClock::now() >= end; };
      out.reps.push_back(timed_slice(pass, done, flops / 1e12));
      if (mix && comm_ops > 0 && collective_moves_data(ctx.group.size()))
        busbw.push_back(all_reduce_busbw(runner->counts(), c, ctx.group.size(), comm_s / comm_ops));
    }
    out.metrics["implementation"] = problem->details();
    if (!busbw.empty()) out.metrics["all_reduce_busbw"] = median_of(busbw);
    check_output_agreement(out, *problem, ctx.group, p.n);  // silent data corruption: the ranks' outputs agree
    apply_check(out, problem->verify());
    if (mix) check_collective(out, *runner);
    return out;
  }

  RankMeasurement measure_stream(const BurnPoint& p, RunContext& ctx) const {
    RankMeasurement out;
    decltype(ctx.device.make_stream(p.dtype, p.elements, ctx.seed)) arrays;
    agreed_setup(ctx.group, key(), [&] { arrays = ctx.device.make_stream(p.dtype, p.elements, ctx.seed); });
    (void)arrays->run(StreamOp::triad);  // warm-up, untimed
    const double bytes = static_cast<double>(stream_bytes(StreamOp::triad, p.elements, dtype_size(p.dtype)));
    const auto slice_s = p.seconds / kBurnSlicesPerWindow;
    ctx.group.barrier();
    const auto start = SteadyClock::now();
    const auto window_end = start + std::chrono::duration<double>(p.seconds);
    for (int s = 0; s < kBurnSlicesPerWindow; ++s) {
      if (s > 0 && SteadyClock::now() >= window_end) break;  // passes longer than a slice: the window ends on time
      const auto end = start + std::chrono::duration<double>(slice_s * (s + 1));
      const auto pass = [&] {
        const FaultScope planted(WorkPlace{});
        const double t = arrays->run(StreamOp::triad);
        return stretch_timed(t + spend_planted(FaultSite::memory, t));
      };
      out.reps.push_back(timed_slice(pass, [&] { return SteadyClock::now() >= end; }, bytes / 1e9));
    }
    out.metrics["bytes_per_pass"] = bytes;
    apply_check(out, arrays->verify(StreamOp::triad));
    return out;
  }

  // all_reduce windows: batches of operations sized to a tenth of a slice from the first batch's
  // slowest rank (the same on every rank, as a collective needs), the group agreeing when a slice ends.
  RankMeasurement measure_all_reduce(const BurnPoint& p, RunContext& ctx) const {
    RankMeasurement out;
    if (ctx.comm == nullptr) throw Error("burn.all_reduce needs a communicator", 1);
    const int n = ctx.group.size();
    CollectiveCase c = all_reduce_case(p, ctx);
    if (auto why = ctx.comm->unsupported(c)) {
      out.skipped = true;
      out.message = *why;
      return out;
    }
    if (!collective_moves_data(n)) {
      out.skipped = true;
      out.message = "an all_reduce on one rank moves nothing: no bandwidth to burn in";
      return out;
    }
    std::unique_ptr<CollectiveRunner> runner;
    agreed_setup(ctx.group, key(), [&] { runner = ctx.comm->prepare(c); });
    const WorkPlace place = comm_work_place(ctx.group, ctx.hosts);
    const auto slice_s = p.seconds / kBurnSlicesPerWindow;
    auto timed_ops = [&](int iters) {
      const FaultScope planted(place);
      return stretch_timed(runner->time(iters));
    };
    const int batch = all_reduce_batch(slice_s, timed_ops, [&](double mine) {
      const auto all = ctx.group.allgather(mine);
      return *std::max_element(all.begin(), all.end());
    });
    std::vector<double> per_op;
    const auto start = SteadyClock::now();
    const auto window_end = start + std::chrono::duration<double>(p.seconds);
    for (int s = 0; s < kBurnSlicesPerWindow; ++s) {
      if (s > 0 && ctx.group.first_failed(SteadyClock::now() >= window_end) >= 0) break;  // the window ends on time
      const auto end = start + std::chrono::duration<double>(slice_s * (s + 1));
      double timed = 0;
      int ops = 0;
      do {
        timed += timed_ops(batch) * batch;
        ops += batch;
      } while (ctx.group.first_failed(SteadyClock::now() >= end) < 0);
      out.reps.push_back(all_reduce_busbw(runner->counts(), c, n, timed / ops));
      per_op.push_back(timed / ops);
    }
    out.metrics["time_us"] = median_of(per_op) * 1e6;
    out.metrics["ops_per_batch"] = batch;
    out.aggregate = median_of(ctx.group.allgather(median_of(out.reps)));
    check_collective(out, *runner);
    return out;
  }

  static CollectiveCase all_reduce_case(const BurnPoint& p, const RunContext& ctx) {
    CollectiveCase c;
    c.coll = Collective::all_reduce;
    c.dtype = DType::fp32;
    c.op = RedOp::sum;
    c.size_bytes = p.size_bytes;
    c.seed = ctx.seed;
    return c;
  }

  static double all_reduce_busbw(const CollCounts& counts, const CollectiveCase& c, int n, double seconds) {
    return collective_bandwidth(collective_spec(Collective::all_reduce), counts, dtype_size(c.dtype), n, seconds).busbw;
  }

  // The all_reduce's exact check at the window's end; a wrong value on any rank makes every rank's
  // window invalid (the group's result is wrong).
  static void check_collective(RankMeasurement& out, CollectiveRunner& runner) {
    const auto wrong = runner.check();
    out.metrics["all_reduce_wrong"] = wrong;
    if (wrong > 0) {
      out.valid = false;
      out.message = (out.message.empty() ? "" : out.message + "; ") +
                    fmt::format("verification failed: {} wrong all_reduce values", wrong);
    }
  }

  BurnKind kind_;
};

}  // namespace

void register_burn_benchmarks(Registry& r) {
  for (BurnKind k : {BurnKind::gemm, BurnKind::stream, BurnKind::all_reduce, BurnKind::mix})
    r.add(std::make_unique<BurnBenchmark>(k));
}

}  // namespace gpuscale
