// The fleet benchmarks (docs/fleet.md): every pair of nodes, and every pair of GPUs within each node,
// measured through a collective (sendrecv, all_reduce) of its own, in rounds of disjoint pairs that
// run at the same time (harness/benchmarks/fleet/pair_schedule.h). Each is measured once, at the job's full size; the
// collective itself is the registry's own entry, so every pair's result is verified as any
// collective's is, and a wrong pair is reported as wrong.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"
#include "core/stats.h"
#include "harness/benchmarks/comm_timing.h"
#include "harness/benchmarks/defaults.h"
#include "harness/benchmarks/fleet/fleet_measure.h"
#include "harness/benchmarks/fleet/node_pair_passes.h"
#include "harness/benchmarks/fleet/pair_cells.h"
#include "harness/benchmarks/fleet/pair_schedule.h"
#include "harness/plan/plan.h"
#include "harness/registry.h"

namespace gpuscale {
namespace {

using fleet::add_record;
using fleet::gather_cells;
using fleet::matrix_json;
using fleet::median_of_pairs;
using fleet::NodePairPasses;
using fleet::PairResult;
using fleet::placement_of;
using fleet::open_pair;
using fleet::PairComm;
using fleet::run_pair;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A fleet point: which collective every pair runs, and that collective's own point.
struct PairsPoint {
  std::string collective;  // "sendrecv" | "all_reduce"
  nlohmann::json inner;    // the collective's params: dtype, size_bytes, placement (op)
};

BenchmarkInfo fleet_info(const char* key, const char* description) {
  BenchmarkInfo info{key,
                     "fleet",
                     description,
                     "GB/s",
                     Scope::collective,
                     Efficiency::link_peak,
                     {{"collective", "sendrecv or all_reduce: what every pair runs (busbw, nccl-tests semantics)"},
                      {"dtype", "fp32"},
                      {"size_bytes", "one large message: 256M on GPUs, 8M on the CPU (4M with --quick); -e sets it"},
                      {"placement", "out-of-place"}},
                     {"cpu", "cuda"}};
  info.whole_job = true;
  info.opt_in = true;
  return info;
}

class PairsBase : public PointBenchmark<PairsPoint> {
 public:
  PairsBase(BenchmarkInfo info, std::vector<std::string> collectives, const char* topology)
      : PointBenchmark(std::move(info)), collectives_(std::move(collectives)), topology_(topology) {}

  PairsPoint point(const nlohmann::json& params) const override {
    PairsPoint p{params.at("collective").get<std::string>(), params};
    if (std::find(collectives_.begin(), collectives_.end(), p.collective) == collectives_.end())
      throw Error(fmt::format("{}: collective '{}' is not one it runs", key(), p.collective));
    p.inner.erase("collective");
    return p;
  }

  std::vector<nlohmann::json> cases(const PlanContext& ctx) const override {
    const std::uint64_t size = ctx.opts.max_bytes.value_or(ctx.backend == "cuda" ? (256ULL << 20)
                                                           : ctx.opts.quick    ? (4ULL << 20)
                                                                               : (8ULL << 20));
    std::vector<nlohmann::json> out;
    for (const auto& c : collectives_) {
      nlohmann::json p = {{"collective", c}, {"dtype", "fp32"}, {"size_bytes", size}, {"placement", "out-of-place"}};
      if (c == "all_reduce") p["op"] = "sum";
      out.push_back(std::move(p));
    }
    return out;
  }

 protected:
  const Benchmark& inner(const PairsPoint& p) const {
    const Benchmark* b = registry().find(p.collective);
    if (b == nullptr) throw Error(fmt::format("{}: no collective '{}'", key(), p.collective));
    return *b;
  }

  ExpectedPeak peak_of(const PairsPoint& p, const PeakContext& ctx, const std::string&) const override {
    return inner(p).expected_peak(p.inner, ctx, topology_);
  }

  // Memory: one pair's collective at a time. Work: the collective once per round and pass, and a communicator
  // per round and pass (pair_setup_allowance_s: a floor, or a multiple of the slowest init this run
  // measured), for at most `rounds(p, ctx)` rounds.
  PointDemand demand_of(const PairsPoint& p, const DemandContext& ctx) const override {
    auto d = inner(p).demand(p.inner, ctx);
    const double r = static_cast<double>(rounds(p, ctx) * max_passes());
    d.bytes *= r;
    d.flops *= r;
    d.setup_s = pair_setup_allowance_s(ctx.comm_init_s) * r;
    d.communicators = std::max(d.communicators, 1);  // one pair's at a time, beside the inner point's own
    return d;
  }

  // The most rounds (node pairs) or steps (GPU pairs) the point can take on ctx.ranks ranks, per pass.
  virtual std::size_t rounds(const PairsPoint& p, const DemandContext& ctx) const = 0;
  // The most passes over them, counting the suspects' own pass by its rounds (node pairs: 4).
  virtual std::size_t max_passes() const { return 1; }

 private:
  std::vector<std::string> collectives_;
  const char* topology_;
};

// Every pair of nodes: the sendrecv rail by rail (local rank i of one node with local rank i of the
// other, every rail at once, as a rail-optimised fabric is cabled: one matrix per rail, and the node-pair
// matrix as each pair's slowest rail); the all_reduce over all GPUs of both nodes (NCCL's own mix of
// NVLink and network: the node-pair matrix alone).
class NodePairs final : public PairsBase {
 public:
  NodePairs()
      : PairsBase(fleet_info("pairs", "every pair of nodes (round-robin rounds of disjoint pairs at once): sendrecv rail "
                                      "by rail (local rank i of both nodes, all rails at once; pairs and rails in turns "
                                      "under --tiling sequential), all_reduce over all GPUs of both; a matrix per rail "
                                      "and the node-pair matrix of busbw (--pairs-rounds samples it)"),
                  {"sendrecv", "all_reduce"}, "inter-node") {}

 protected:
  // Refused on one node; else every pair of the schedule measured, the suspects confirmed, and the
  // row's figures: the median node pair, the passes, and the matrices
  // (harness/benchmarks/fleet/node_pair_passes.h).
  RankMeasurement measure(const PairsPoint& p, RunContext& ctx) const override {
    RankMeasurement out;
    const auto where = placement_of(*ctx.hosts);
    const auto m = static_cast<std::size_t>(where.topo.nodes);
    if (m < 2) {
      out.skipped = true;
      out.message = fmt::format("pairs: the job runs on one node ({}): there are no node pairs to measure",
                                where.node_hosts.front());
      return out;
    }
    const auto schedule =
        ctx.opts.pairs_rounds ? sampled_rounds(where.topo.nodes, *ctx.opts.pairs_rounds, ctx.seed) : round_robin(where.topo.nodes);
    // sendrecv: one two-rank group per rail; all_reduce: one group of both nodes' ranks.
    const bool by_rail = p.collective == "sendrecv";
    NodePairPasses passes(inner(p), p.inner, where, by_rail, ctx, out);
    auto cells = passes.pass(schedule);
    const int measured_passes = passes.confirm(cells, schedule);
    out.aggregate = median_of_pairs(passes.node_cells(cells)[0], m);
    out.metrics["pairs_measured"] = out.reps.size();
    out.row_metrics = {{"size_bytes", p.inner.at("size_bytes")},
                       {"rounds", schedule.size()},
                       {"passes", measured_passes},
                       {"tournament_rounds", round_robin_rounds(where.topo.nodes)},
                       {"rep_order", "blocked"}};  // each pair's repetitions in its round (node_pair_passes.cpp)
    if (by_rail) out.row_metrics["rails"] = passes.rails();
    // The matrices travel in the group's first rank's summary only (harness/rows/measurement_json.h): the
    // others need not build them.
    if (ctx.group.rank() != 0) return out;
    out.row_metrics["matrices"] = passes.matrices_json(cells);
    return out;
  }

  std::size_t max_passes() const override { return 4; }  // two, and the suspects' (at most two rounds' worth)

  // The job's nodes (at most the ranks where not known); --pairs-rounds caps the rounds. The rails of a
  // round run at once, each rank in one two-rank group of the same message: a round's work per rank is
  // one collective's, as for the all_reduce over the pair. --tiling sequential runs a round's pairs in
  // turns, and the sendrecv's rails of a pair in turns: as many turns as pairs (times the rails, the
  // most GPUs of a node), each a communicator and the collective's time.
  std::size_t rounds(const PairsPoint& p, const DemandContext& ctx) const override {
    const int nodes = ctx.nodes > 0 ? std::min(ctx.nodes, ctx.ranks) : ctx.ranks;
    const auto all = round_robin_rounds(nodes);
    const auto r = std::max<std::size_t>(1, ctx.opts.pairs_rounds ? std::min(all, static_cast<std::size_t>(*ctx.opts.pairs_rounds)) : all);
    if (ctx.opts.tiling != TilingMode::sequential) return r;
    const int rails = p.collective == "sendrecv" ? (ctx.ranks + std::max(1, nodes) - 1) / std::max(1, nodes) : 1;
    return r * static_cast<std::size_t>(std::max(1, nodes / 2)) * static_cast<std::size_t>(std::max(1, rails));
  }

 private:
  static std::size_t round_robin_rounds(int nodes) { return nodes < 2 ? 0 : static_cast<std::size_t>(nodes % 2 ? nodes : nodes - 1); }
};

// Every pair of GPUs within each node, one pair at a time per node (as nvbandwidth measures them),
// every node at once: a GPU-pair matrix per node.
class GpuPairs final : public PairsBase {
 public:
  GpuPairs()
      : PairsBase(fleet_info("gpu_pairs", "every pair of GPUs within each node, one pair at a time (every node at "
                                          "once): a GPU-pair matrix of sendrecv busbw per node"),
                  {"sendrecv"}, "intra-node") {}

 protected:
  RankMeasurement measure(const PairsPoint& p, RunContext& ctx) const override {
    RankMeasurement out;
    const auto where = placement_of(*ctx.hosts);
    std::size_t g = 0;  // the most GPUs on one node: every matrix is g x g (smaller nodes leave cells unmeasured)
    for (const auto& rs : where.ranks) g = std::max(g, rs.size());
    if (g < 2) {
      out.skipped = true;
      out.message = "gpu_pairs: every node runs one GPU: there are no GPU pairs to measure";
      return out;
    }
    const int me = ctx.group.world_rank();
    const auto node = static_cast<std::size_t>(where.topo.node_of_rank[static_cast<std::size_t>(me)]);
    const auto& local = where.ranks[node];
    const auto my_index = static_cast<int>(std::find(local.begin(), local.end(), me) - local.begin());
    const auto steps = gpu_pair_schedule(static_cast<int>(g), false);
    const auto nodes = where.ranks.size();
    std::vector<double> mine;  // one record per step (harness/benchmarks/fleet/pair_cells.h): node n's cells are matrix n of g x g
    for (const auto& step : steps) {
      const bool in_pair = (step.src == my_index || step.dst == my_index) &&
                           static_cast<std::size_t>(std::max(step.src, step.dst)) < local.size();
      Group pair(ctx.group, in_pair ? static_cast<int>(node) : -1, my_index);
      PairComm made = open_pair(pair, ctx);  // every rank: a split from the job's communicator
      PairResult r;
      double cell = kNaN;
      if (pair.member()) {
        const auto s = static_cast<std::size_t>(step.src), d = static_cast<std::size_t>(step.dst);
        r = run_pair(inner(p), p.inner, pair, made, ctx, fmt::format("GPU pair {}:{} + {}", where.node_hosts[node], s, d), out);
        cell = static_cast<double>((node * g + s) * g + d);
        if (std::isfinite(r.value)) out.reps.push_back(r.value);
      }
      add_record(mine, cell, r);
    }
    const auto cells = gather_cells(ctx.group, mine, nodes, g);
    nlohmann::json matrices = nlohmann::json::array();
    std::vector<double> all_pairs;
    for (std::size_t n = 0; n < nodes; ++n) {
      const auto members = where.ranks[n].size();
      if (members < 2) continue;
      PairCells node_cells;
      for (std::size_t t = 0; t < 3; ++t)
        for (std::size_t i = 0; i < members; ++i)
          for (std::size_t j = 0; j < members; ++j) node_cells[t].push_back(cells[n][t][i * g + j]);
      for (std::size_t i = 0; i < members; ++i)
        for (std::size_t j = i + 1; j < members; ++j)
          if (std::isfinite(node_cells[0][i * members + j])) all_pairs.push_back(node_cells[0][i * members + j]);
      nlohmann::json labels = nlohmann::json::array(), ranks = nlohmann::json::array();
      for (std::size_t i = 0; i < members; ++i) {
        labels.push_back(fmt::format("GPU{}", i));
        ranks.push_back({where.ranks[n][i]});
      }
      matrices.push_back(matrix_json("gpu", std::vector<std::string>(members, where.node_hosts[n]), labels, ranks, node_cells));
    }
    out.aggregate = median_of(all_pairs);
    out.metrics["pairs_measured"] = out.reps.size();
    out.row_metrics = {{"size_bytes", p.inner.at("size_bytes")}, {"steps", steps.size()}, {"matrices", matrices},
                       {"rep_order", "blocked"}};  // each GPU pair's repetitions in its step
    return out;
  }

  // g (g - 1) / 2 steps for the g GPUs of the largest node: at most the ranks, and at most 64 per node.
  std::size_t rounds(const PairsPoint&, const DemandContext& ctx) const override {
    const auto g = static_cast<std::size_t>(std::clamp(ctx.ranks, 1, 64));
    return std::max<std::size_t>(1, g * (g - 1) / 2);
  }
};

}  // namespace

void register_fleet_benchmarks(Registry& r) {
  r.add(std::make_unique<NodePairs>());
  r.add(std::make_unique<GpuPairs>());
}

}  // namespace gpuscale
