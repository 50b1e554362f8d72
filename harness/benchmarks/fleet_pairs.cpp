// The fleet benchmarks (docs/fleet.md): every pair of nodes, and every pair of GPUs within each node,
// measured through a collective (sendrecv, all_reduce) of its own, in rounds of disjoint pairs that
// run at the same time (harness/pair_schedule.h). Each is measured once, at the job's full size; the
// collective itself is the registry's own entry, so every pair's result is verified as any
// collective's is, and a wrong pair is reported as wrong.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "backends/backend.h"
#include "core/error.h"
#include "core/stats.h"
#include "harness/benchmarks/defaults.h"
#include "harness/guard/run_guard.h"
#include "harness/pair_confirm.h"
#include "harness/pair_schedule.h"
#include "harness/plan.h"
#include "harness/registry.h"
#include "world/test_hosts.h"

namespace gpuscale {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A fleet point: which collective every pair runs, and that collective's own point.
struct PairsPoint {
  std::string collective;  // "sendrecv" | "all_reduce"
  nlohmann::json inner;    // the collective's params: dtype, size_bytes, placement (op)
};

// Where the group's ranks run: the nodes in Topology numbering, and each rank's place on its node.
struct Placement {
  Topology topo;
  std::vector<std::string> node_hosts;   // host of each node
  std::vector<std::vector<int>> ranks;   // world ranks of each node, in local order
};

Placement placement_of(const std::vector<std::string>& hosts) {
  Placement p;
  p.topo = make_topology(hosts, local_ranks_of(hosts));
  p.node_hosts.resize(static_cast<std::size_t>(p.topo.nodes));
  p.ranks.resize(static_cast<std::size_t>(p.topo.nodes));
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    const auto n = static_cast<std::size_t>(p.topo.node_of_rank[r]);
    if (p.ranks[n].empty()) p.node_hosts[n] = hosts[r];
    p.ranks[n].push_back(static_cast<int>(r));
  }
  return p;
}

// One pair's figure as this rank saw it: the collective's busbw, its repetition spread, whether it
// was valid. A failed or wrong pair leaves NaN in the matrix and makes this rank's measurement wrong.
struct PairResult {
  double value = kNaN, down = kNaN, up = kNaN;
};

PairResult run_pair(const Benchmark& inner, const nlohmann::json& params, const Group& pair, RunContext& ctx,
                    const std::string& name, RankMeasurement& out) {
  PairResult r;
  RankMeasurement m;
  try {
    auto comm = watch_communicator(ctx.backend->make_communicator(pair));
    RunContext sub{ctx.device, comm.get(), pair, ctx.opts, ctx.seed, ctx.backend, ctx.hosts};
    m = inner.run(params, sub);
  } catch (const CommunicatorAborted&) {
    throw;  // the run ends (harness/runner.cpp)
  } catch (const std::exception& e) {
    m.failed = true;
    m.message = e.what();
  }
  if (m.failed || !m.valid || m.skipped) {
    out.failed |= m.failed;
    out.valid &= m.valid && !m.failed;
    out.skipped |= m.skipped && !m.failed && m.valid;
    if (out.message.empty()) out.message = fmt::format("{}: {}", name, m.message);
    return r;
  }
  if (!m.aggregate) return r;
  r.value = *m.aggregate;
  const auto s = compute_stats(m.reps);
  if (s.n > 0 && s.median > 0) {
    r.down = std::max(0.0, (s.median - s.min) / s.median);
    r.up = std::max(0.0, (s.max - s.median) / s.median);
  }
  return r;
}

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// M x M cells of `values` (row-major) as JSON rows, NaN as null.
nlohmann::json json_matrix(const std::vector<double>& cells, std::size_t m) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < m; ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (std::size_t j = 0; j < m; ++j) row.push_back(number_or_null(cells[i * m + j]));
    out.push_back(std::move(row));
  }
  return out;
}

// Every member contributes three M x M tables (value, spread below, spread above) with only its own
// cells set; the first finite value of each cell wins. Identical on every member.
std::array<std::vector<double>, 3> merge_cells(const Group& group, const std::array<std::vector<double>, 3>& mine) {
  const std::size_t cells = mine[0].size();
  std::vector<double> flat;
  for (const auto& t : mine) flat.insert(flat.end(), t.begin(), t.end());
  const auto all = group.allgather(flat);
  std::array<std::vector<double>, 3> out;
  for (auto& t : out) t.assign(cells, kNaN);
  for (std::size_t member = 0; member * flat.size() < all.size(); ++member)
    for (std::size_t t = 0; t < 3; ++t)
      for (std::size_t c = 0; c < cells; ++c) {
        const double v = all[member * flat.size() + t * cells + c];
        if (std::isnan(out[t][c]) && std::isfinite(v)) out[t][c] = v;
      }
  return out;
}

double median_of_pairs(const std::vector<double>& cells, std::size_t m) {
  std::vector<double> v;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = i + 1; j < m; ++j)
      if (std::isfinite(cells[i * m + j])) v.push_back(cells[i * m + j]);
  return median_of(v);
}

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
  // per round and pass (kSetupPerRound allows for NCCL's init at scale), for at most `rounds(ctx)` rounds.
  PointDemand demand_of(const PairsPoint& p, const DemandContext& ctx) const override {
    auto d = inner(p).demand(p.inner, ctx);
    const double r = static_cast<double>(rounds(ctx) * max_passes());
    d.bytes *= r;
    d.flops *= r;
    d.setup_s = kSetupPerRound * r;
    return d;
  }

  // The most rounds (node pairs) or steps (GPU pairs) the point can take on ctx.ranks ranks, per pass.
  virtual std::size_t rounds(const DemandContext& ctx) const = 0;
  // The most passes over them: 2 where a suspect is confirmed by a second pass (node pairs).
  virtual std::size_t max_passes() const { return 1; }

  static constexpr double kSetupPerRound = 2.0;  // seconds: a pair communicator (NCCL init) and its warm-up

 private:
  std::vector<std::string> collectives_;
  const char* topology_;
};

// Every pair of nodes, all GPUs of both nodes taking part: the node-pair matrix.
class NodePairs final : public PairsBase {
 public:
  NodePairs()
      : PairsBase(fleet_info("pairs", "every pair of nodes (round-robin rounds of disjoint pairs at once), all GPUs of "
                                      "both taking part: the node-pair matrix of busbw (--pairs-rounds samples it)"),
                  {"sendrecv", "all_reduce"}, "inter-node") {}

 protected:
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
    const int me = ctx.group.world_rank();
    const auto my_node = static_cast<std::size_t>(where.topo.node_of_rank[static_cast<std::size_t>(me)]);
    // One pass: every pair of the schedule once, the cells merged (identical on every rank).
    const auto pass = [&] {
      std::array<std::vector<double>, 3> mine;
      for (auto& t : mine) t.assign(m * m, kNaN);
      for (const auto& round : schedule) {
        int colour = -1;
        for (std::size_t i = 0; i < round.pairs.size(); ++i)
          if (static_cast<std::size_t>(round.pairs[i].a) == my_node || static_cast<std::size_t>(round.pairs[i].b) == my_node)
            colour = static_cast<int>(i);
        Group pair(ctx.group, colour, ctx.group.rank());
        if (!pair.member()) continue;
        const auto& np = round.pairs[static_cast<std::size_t>(colour)];
        const auto a = static_cast<std::size_t>(np.a), b = static_cast<std::size_t>(np.b);
        const auto r = run_pair(inner(p), p.inner, pair, ctx,
                                fmt::format("pair {} + {}", where.node_hosts[a], where.node_hosts[b]), out);
        for (std::size_t t = 0; t < 3; ++t) {
          const double v = t == 0 ? r.value : t == 1 ? r.down : r.up;
          mine[t][a * m + b] = mine[t][b * m + a] = v;
        }
        if (std::isfinite(r.value)) out.reps.push_back(r.value);
      }
      return merge_cells(ctx.group, mine);
    };
    auto cells = pass();
    // A suspect is confirmed before it is named: when the first pass shows one (the run's own outlier
    // rule), every pair is measured again under the same schedule and load, and each cell keeps its
    // better pass (best of N, as STREAM reports). A sick node or link is slow in both; a process
    // starved for a moment (16 ranks on 2 cores, a noisy neighbour) is slow in one.
    const bool confirm = pass_has_suspects(cells, where.node_hosts, where.ranks, ctx.opts.outlier);
    if (confirm) cells = best_cells(cells, pass());
    nlohmann::json ranks = nlohmann::json::array();
    for (const auto& rs : where.ranks) ranks.push_back(rs);
    out.aggregate = median_of_pairs(cells[0], m);
    out.metrics["pairs_measured"] = out.reps.size();
    out.row_metrics = {{"size_bytes", p.inner.at("size_bytes")},
                       {"rounds", schedule.size()},
                       {"passes", confirm ? 2 : 1},
                       {"tournament_rounds", round_robin_rounds(where.topo.nodes)},
                       {"matrices", nlohmann::json::array({{{"kind", "node"},
                                                           {"hosts", where.node_hosts},
                                                           {"labels", where.node_hosts},
                                                           {"ranks", ranks},
                                                           {"values", json_matrix(cells[0], m)},
                                                           {"spread_down", json_matrix(cells[1], m)},
                                                           {"spread_up", json_matrix(cells[2], m)},
                                                           {"directed", false}}})}};
    return out;
  }

  std::size_t max_passes() const override { return 2; }

  // Nodes are at most the ranks; --pairs-rounds caps the rounds.
  std::size_t rounds(const DemandContext& ctx) const override {
    const auto all = round_robin_rounds(ctx.ranks);
    return std::max<std::size_t>(1, ctx.opts.pairs_rounds ? std::min(all, static_cast<std::size_t>(*ctx.opts.pairs_rounds)) : all);
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
    std::array<std::vector<double>, 3> mine;
    for (auto& t : mine) t.assign(nodes * g * g, kNaN);
    for (const auto& step : steps) {
      const bool in_pair = (step.src == my_index || step.dst == my_index) &&
                           static_cast<std::size_t>(std::max(step.src, step.dst)) < local.size();
      Group pair(ctx.group, in_pair ? static_cast<int>(node) : -1, my_index);
      if (!pair.member()) continue;
      const auto s = static_cast<std::size_t>(step.src), d = static_cast<std::size_t>(step.dst);
      const auto r = run_pair(inner(p), p.inner, pair, ctx,
                              fmt::format("GPU pair {}:{} + {}", where.node_hosts[node], s, d), out);
      const std::size_t base = node * g * g;
      for (std::size_t t = 0; t < 3; ++t) {
        const double v = t == 0 ? r.value : t == 1 ? r.down : r.up;
        mine[t][base + s * g + d] = mine[t][base + d * g + s] = v;
      }
      if (std::isfinite(r.value)) out.reps.push_back(r.value);
    }
    const auto cells = merge_cells(ctx.group, mine);
    nlohmann::json matrices = nlohmann::json::array();
    std::vector<double> all_pairs;
    for (std::size_t n = 0; n < nodes; ++n) {
      const auto members = where.ranks[n].size();
      if (members < 2) continue;
      std::array<std::vector<double>, 3> node_cells;
      for (std::size_t t = 0; t < 3; ++t)
        for (std::size_t i = 0; i < members; ++i)
          for (std::size_t j = 0; j < members; ++j) node_cells[t].push_back(cells[t][n * g * g + i * g + j]);
      for (std::size_t i = 0; i < members; ++i)
        for (std::size_t j = i + 1; j < members; ++j)
          if (std::isfinite(node_cells[0][i * members + j])) all_pairs.push_back(node_cells[0][i * members + j]);
      nlohmann::json labels = nlohmann::json::array(), ranks = nlohmann::json::array();
      for (std::size_t i = 0; i < members; ++i) {
        labels.push_back(fmt::format("GPU{}", i));
        ranks.push_back({where.ranks[n][i]});
      }
      matrices.push_back({{"kind", "gpu"},
                          {"hosts", std::vector<std::string>(members, where.node_hosts[n])},
                          {"labels", labels},
                          {"ranks", ranks},
                          {"values", json_matrix(node_cells[0], members)},
                          {"spread_down", json_matrix(node_cells[1], members)},
                          {"spread_up", json_matrix(node_cells[2], members)},
                          {"directed", false}});
    }
    out.aggregate = median_of(all_pairs);
    out.metrics["pairs_measured"] = out.reps.size();
    out.row_metrics = {{"size_bytes", p.inner.at("size_bytes")}, {"steps", steps.size()}, {"matrices", matrices}};
    return out;
  }

  // g (g - 1) / 2 steps for the g GPUs of the largest node: at most the ranks, and at most 64 per node.
  std::size_t rounds(const DemandContext& ctx) const override {
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
