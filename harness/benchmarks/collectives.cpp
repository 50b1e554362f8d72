// Collective benchmarks with nccl-tests' semantics: one registry entry per entry of
// collectives/collective_table.h, points over dtypes, ops, placements and message sizes.
#include <algorithm>
#include <numeric>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "collectives/alltoallv_plan.h"
#include "collectives/collective_check.h"
#include "core/error.h"
#include "core/fault.h"
#include "core/timed_span.h"
#include "core/stats.h"
#include "core/term_text.h"
#include "core/units.h"
#include "harness/benchmarks/agreed_setup.h"
#include "harness/benchmarks/collective_plan.h"
#include "harness/benchmarks/defaults.h"
#include "harness/benchmarks/iter_timing.h"
#include "harness/benchmarks/work_place.h"
#include "harness/plan/plan.h"
#include "harness/registry.h"

namespace gpuscale {
namespace {

// Operations per input the collective check evaluates (a counter-based random draw and a compare), for
// the watchdog budget (demand_of).
constexpr double kCheckOpsPerInput = 64;

// nccl-tests -a: how the ranks' times become the reported time.
double reduce_time(const std::vector<double>& t, const std::string& mode) {
  if (mode == "min") return *std::min_element(t.begin(), t.end());
  if (mode == "max") return *std::max_element(t.begin(), t.end());
  if (mode == "rank0") return t.front();
  return std::accumulate(t.begin(), t.end(), 0.0) / static_cast<double>(t.size());
}

BenchmarkInfo collective_info(const CollectiveSpec& spec) {
  BenchmarkInfo info{std::string(spec.name),
                     "collective",
                     fmt::format("{} with nccl-tests semantics (compare with {}); busbw = algbw x {}", spec.name,
                                 spec.nccl_tests, spec.bus_factor_text),
                     "GB/s",
                     Scope::collective,
                     Efficiency::link_peak,
                     {{"dtype", "fp32 by default (--dtypes; nccl-tests names float, half, bfloat16, double accepted)"},
                      {"size_bytes", "requested message size (-b/-e/-f or -i); counts round as nccl-tests"},
                      {"placement", "out-of-place, in-place (--placement)"},
                      {"transport", "CUDA backend: nccl, or mpi on GPU buffers (--transports; mpi by default when CUDA-aware)"}},
                     {"cpu", "cuda"}};
  if (spec.reduces) info.parameters.push_back({"op", "sum by default (--ops sum,prod,min,max,avg)"});
  if (spec.id == Collective::alltoallv) {
    info.parameters.push_back({"skew", "uniform and zipf:1.2 by default (--skew; weights:W... from file:PATH): peer d's "
                                       "share of every rank's data"});
    // Named, as nccl-tests' alltoallv_perf is its own binary: a default run keeps its rows and length
    // (--benchmarks all,alltoallv adds it).
    info.opt_in = true;
  }
  if (spec.rooted) info.parameters.push_back({"root", "rank 0"});
  return info;
}

// A collective point is the communicator's own case (collectives/communicator.h); the seed and the
// sweep's span are set when it runs.
class CollectiveBenchmark final : public PointBenchmark<CollectiveCase> {
 public:
  explicit CollectiveBenchmark(const CollectiveSpec& spec) : PointBenchmark(collective_info(spec)), spec_(spec) {}

  CollectiveCase point(const nlohmann::json& params) const override {
    CollectiveCase c;
    c.coll = spec_.id;
    c.dtype = parse_dtype_or_throw(params.at("dtype").get<std::string>());
    if (spec_.reduces) {
      const auto op = params.at("op").get<std::string>();
      const auto parsed = parse_redop(op);
      if (!parsed) throw Error(fmt::format("invalid reduction op '{}' in a plan point", terminal_quote(op)));
      c.op = *parsed;
    }
    c.root = params.value("root", 0);
    if (spec_.id == Collective::alltoallv) {
      std::string why;
      const auto text = params.at("skew").get<std::string>();
      const auto skew = parse_alltoallv_skew(text, why);
      if (!skew) throw Error(fmt::format("invalid skew '{}' in a plan point: {}", terminal_quote(text), why));
      c.skew = *skew;
    }
    c.in_place = params.at("placement").get<std::string>() == "in-place";
    c.size_bytes = params.at("size_bytes").get<std::uint64_t>();
    c.transport = params.value("transport", std::string());
    return c;
  }

  std::vector<nlohmann::json> cases(const PlanContext& ctx) const override {
    std::vector<DType> types;
    for (DType t : ctx.opts.dtypes.empty() ? std::vector<DType>{DType::fp32} : ctx.opts.dtypes)
      if (dtype_used_by(t, kForCollectives)) types.push_back(t);
    std::vector<RedOp> ops = {RedOp::sum};
    if (spec_.reduces && !ctx.opts.ops.empty()) ops = ctx.opts.ops;
    std::vector<bool> placements = ctx.opts.in_place.empty() ? std::vector<bool>{false, true} : ctx.opts.in_place;
    if (!spec_.in_place) placements.erase(std::remove(placements.begin(), placements.end(), true), placements.end());
    const auto sizes = collective_sizes(ctx.opts, ctx.backend);
    if (!sizes.empty())  // refused up front, before anything is allocated
      if (auto why = collective_memory_refusal(sizes.back(), ctx.device.info())) throw Error(*why);
    auto transports = collective_transports(ctx.opts, ctx.backend, ctx.transports);
    std::vector<AlltoallvSkew> skews = {AlltoallvSkew{}};
    if (spec_.id == Collective::alltoallv) {
      skews = ctx.opts.skews.empty() ? std::vector<AlltoallvSkew>{{}, {1.2, {}}} : ctx.opts.skews;
      const auto counts = gpu_counts(ctx.world_size);
      for (const auto& s : skews)  // weights for a group size the launch never measures: refused up front
        if (!s.weights.empty() && std::find(counts.begin(), counts.end(), static_cast<int>(s.weights.size())) == counts.end())
          throw Error(fmt::format("--skew weights for {} ranks: no GPU count of this launch ({}) has {}", s.weights.size(),
                                  fmt::join(counts, ", "), s.weights.size()));
    }
    if (transports.empty()) transports.push_back("");  // the backend's only transport: no parameter
    std::vector<nlohmann::json> out;
    for (const auto& transport : transports)
      for (DType t : types)
        for (RedOp op : ops)
          for (bool in_place : placements)
            for (const auto& skew : skews)
              for (auto size : sizes) {
                nlohmann::json p = {{"dtype", dtype_name(t)},
                                    {"size_bytes", size},
                                    {"placement", in_place ? "in-place" : "out-of-place"}};
                if (spec_.reduces) p["op"] = redop_name(op);
                if (spec_.rooted) p["root"] = 0;
                if (spec_.id == Collective::alltoallv) p["skew"] = alltoallv_skew_text(skew);
                if (!transport.empty()) p["transport"] = transport;
                out.push_back(std::move(p));
              }
    return out;
  }

  RankMeasurement measure(const CollectiveCase& point, RunContext& ctx) const override {
    CollectiveCase c = point;
    c.seed = ctx.seed;
    const auto sizes = collective_sizes(ctx.opts, ctx.device.info().backend);
    c.span_bytes = sizes.empty() ? 0 : sizes.back();  // nccl-tests' -e: the buffers its iterations move through
    RankMeasurement out;
    if (auto why = alltoallv_skew_refusal(c.skew, ctx.group.size())) {  // weights for another group size
      out.skipped = true;
      out.message = *why;
      return out;
    }
    if (auto why = ctx.comm->unsupported(c)) {  // decided from the case alone: identical on every rank
      out.skipped = true;
      out.message = *why;
      return out;
    }
    const auto m = collective_methodology(ctx.opts);
    const int n = ctx.group.size();
    decltype(ctx.comm->prepare(c)) runner;
    agreed_setup(ctx.group, key(), [&] { runner = ctx.comm->prepare(c); });
    const auto& counts = runner->counts();
    const std::uint64_t es = dtype_size(c.dtype);
    if (m.warmup > 0) runner->time(m.warmup);
    const WorkPlace place = comm_work_place(ctx.group, ctx.hosts);  // where a planted NIC or link fault acts
    std::vector<double> mine_t, mine_bw, reduced_bw, reduced_t;
    std::optional<TimedSpan> timed(std::in_place);  // the row's energy: these repetitions only (core/timed_span.h)
    for (int r = 0; r < m.reps; ++r) {
      double t = 0;
      {
        const FaultScope planted(place);  // the transport spends a planted fault's time in each operation
        t = stretch_timed(runner->time(m.iters));  // stretched only under slow-host-reported (core/fault.h)
      }
      const auto all = ctx.group.allgather(t);
      const double tr = reduce_time(all, ctx.opts.time_reduce);
      mine_t.push_back(t);
      mine_bw.push_back(collective_bandwidth(spec_, counts, es, n, t).busbw);
      reduced_bw.push_back(collective_bandwidth(spec_, counts, es, n, tr).busbw);
      reduced_t.push_back(tr);
    }
    timed.reset();
    nlohmann::json per_iteration = nlohmann::json::object();  // the -I pass, after the timed repetitions
    if (ctx.opts.iter_timing) {
      const int job_ranks = ctx.hosts ? static_cast<int>(ctx.hosts->size()) : n;
      measure_iterations(*runner, ctx.group, place, m.iters, ctx.opts.skip_iters, job_ranks, per_iteration);
    }
    const double wrong_mine = static_cast<double>(runner->check());
    const auto wrong_all = ctx.group.allgather(wrong_mine);
    const double wrong_total = std::accumulate(wrong_all.begin(), wrong_all.end(), 0.0);

    // At one rank nothing crosses a link: the time is real, a bandwidth is not (nccl-tests prints busbw
    // 0 there, and a broadcast's algbw would be a buffer left in place). No figure, so no reference.
    const bool moves = collective_moves_data(n);
    if (moves) out.reps = mine_bw;  // this rank's busbw from its own time: where stragglers show
    out.metrics["wrong"] = wrong_mine;
    out.metrics["time_us"] = median_of(mine_t) * 1e6;
    const double t_med = median_of(reduced_t);
    const auto bw = collective_bandwidth(spec_, counts, es, n, t_med);
    if (moves) out.aggregate = median_of(reduced_bw);
    const std::uint64_t size = collective_size_bytes(counts, es);
    out.row_metrics = {{"size_bytes", size},
                       {"count", counts.param},
                       {"requested_bytes", c.size_bytes},
                       {"rounded", size != c.size_bytes},
                       {"time_us", t_med * 1e6},
                       {"algbw", moves ? nlohmann::json(bw.algbw) : nlohmann::json(nullptr)},
                       {"busbw", moves ? nlohmann::json(*out.aggregate) : nlohmann::json(nullptr)},
                       {"bus_factor", spec_.bus_factor(n)},
                       {"wrong", wrong_total},
                       {"iters", m.iters},
                       {"time_reduce", ctx.opts.time_reduce},
                       {"transport", runner->transport()}};
    // A check that looked at part of the result (above kCollCheckBudget: collective_check.h) says how much.
    const CollCheckCase checked{c.coll, c.dtype, c.op, n, c.root, counts, c.seed};
    if (const auto seen = collective_checked_count(checked, c.root); seen < collective_result_count(checked, c.root))
      out.row_metrics["check_sampled"] = {{"result_elements", collective_result_count(checked, c.root)},
                                          {"checked_elements", seen}};
    out.row_metrics.update(runner->details());
    out.row_metrics.update(per_iteration);
    if (wrong_total > 0) {
      out.valid = false;
      out.message = fmt::format("{} wrong values across {} ranks ({} here)", wrong_total, n, wrong_mine);
    }
    return out;
  }

  // The send and receive buffers at the largest group (all_gather's receive buffer grows with it); every
  // operation (warm-up, timed, checked) reads and writes them.
  PointDemand demand_of(const CollectiveCase& point, const DemandContext& ctx) const override {
    const bool in_place = point.in_place;
    const std::uint64_t es = dtype_size(point.dtype);
    // Weights run at their own group size only (measure() skips the others).
    const int ranks = point.skew.weights.empty() ? std::max(ctx.ranks, 1) : static_cast<int>(point.skew.weights.size());
    const auto c = collective_counts(spec_, point.size_bytes, es, ranks, point.skew);
    const std::uint64_t recv = saturating_mul(in_place ? std::max(c.recv, c.send) : c.recv, es);
    const std::uint64_t send = in_place ? 0 : saturating_mul(c.send, es);
    const auto m = collective_methodology(ctx.opts);
    PointDemand d;
    d.memory_bytes = saturating_add(send, recv);
    d.memory_what = in_place ? fmt::format("a buffer of {} at {} ranks", format_bytes(recv), ranks)
                             : fmt::format("send {} and receive {} at {} ranks", format_bytes(send), format_bytes(recv), ranks);
    const double pass = ctx.opts.iter_timing ? m.iters : 0;  // the per-iteration pass (iter_timing.h)
    d.bytes = (static_cast<double>(send) + static_cast<double>(recv)) * (m.warmup + static_cast<double>(m.reps) * m.iters + pass + 1);
    // The check: tens of operations per input it evaluates (a counter-based random draw each).
    const CollCheckCase check{point.coll, point.dtype, point.op, ranks, point.root, c, 0};
    d.flops = kCheckOpsPerInput * collective_check_evaluations(check, point.root);
    if (point.transport == "nccl") d.transport_timeout_s = ctx.opts.backend_options.timeout_s;
    return d;
  }

  ExpectedPeak peak_of(const CollectiveCase& point, const PeakContext& ctx, const std::string& topology) const override {
    return collective_link_peak(topology, ctx.links, point.size_bytes);
  }

 private:
  const CollectiveSpec& spec_;
};

}  // namespace

void register_collective_benchmarks(Registry& r) {
  for (const auto& spec : collective_table()) r.add(std::make_unique<CollectiveBenchmark>(spec));
}

}  // namespace gpuscale
