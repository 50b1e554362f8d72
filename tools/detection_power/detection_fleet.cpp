#include "tools/detection_power/detection_fleet.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/stats.h"
#include "harness/benchmarks/defaults.h"
#include "harness/benchmarks/fleet/pair_confirm.h"
#include "harness/rows/row_builder.h"
#include "harness/rows/row_groups.h"

namespace gpuscale::detection {
namespace {

// Illustrative healthy figures (the rule is relative: only the ratios matter). GEMM bf16 8192^3 and
// STREAM triad of an H100/H200-class GPU, a 400 Gb/s NIC's sendrecv (docs/fleet.md's cost estimate),
// an NVLink pair's sendrecv.
constexpr double kGemmTflops = 700, kStreamGbs = 3000, kRailGbs = 45, kLinkGbs = 350;
// A rank's checkpoint write: a node's local NVMe writes about 34 GB/s (an ND H100 v5 node by fio, issue
// 28), shared by its 8 ranks.
constexpr double kCkptRankGbs = 34.0 / 8;

struct Point {
  const char* benchmark;
  const char* unit;
  const char* params;
  double base;
};
Point point_of(std::string_view benchmark) {
  if (benchmark == "gemm")
    return {"gemm", "TFLOP/s", R"({"dtype":"bf16","m":8192,"n":8192,"k":8192})", kGemmTflops};
  return {"stream.triad", "GB/s", R"({"dtype":"fp64","elements":268435456})", kStreamGbs};
}

// One thing's own speed, drawn once: 1 + N(0, spread), kept above 0 (a 10-sigma draw is not a GPU).
double own_speed(std::mt19937_64& gen, double spread) {
  std::normal_distribution<double> d(1.0, spread);
  return std::max(0.05, d(gen));
}

std::vector<double> repetitions(std::mt19937_64& gen, double level, double noise, int reps) {
  std::normal_distribution<double> d(1.0, noise);
  std::vector<double> out(static_cast<std::size_t>(reps));
  for (auto& r : out) r = level * std::max(0.05, d(gen));
  return out;
}

ResultRow one_gpu_row(const FleetShape& shape, const Point& p, int gpu, std::vector<double> reps) {
  RowInputs in;
  in.benchmark = p.benchmark;
  in.scope = Scope::independent;
  in.unit = p.unit;
  in.params = nlohmann::json::parse(p.params);
  in.gpu_count = 1;
  in.nodes = 1;
  in.topology = group_topology(1, 1);
  RankMeasurement m;
  m.reps = std::move(reps);
  in.ranks.push_back({gpu, host_name(gpu / shape.gpus_per_node), gpu % shape.gpus_per_node, summarize(m, true)});
  return build_row(in);
}

// Node `node`'s checkpoint.write row at its own count: each of its ranks with its repetitions.
ResultRow node_row(const FleetShape& shape, int node, const std::vector<std::vector<double>>& reps) {
  RowInputs in;
  in.benchmark = "checkpoint.write";
  in.scope = Scope::independent;
  in.unit = "GB/s";
  in.params = nlohmann::json{{"layout", "file_per_rank"}, {"io", "buffered"}};
  in.gpu_count = shape.gpus_per_node;
  in.nodes = 1;
  in.topology = group_topology(shape.gpus_per_node, 1);
  for (int local = 0; local < shape.gpus_per_node; ++local) {
    RankMeasurement m;
    m.reps = reps[static_cast<std::size_t>(local)];
    in.ranks.push_back({node * shape.gpus_per_node + local, host_name(node), local, summarize(m, true)});
  }
  return build_row(in);
}

// A pair's cells, as the run keeps them (harness/benchmarks/fleet/fleet_pairs.cpp): the median of its
// repetitions, and how far below and above the median the slowest and fastest were.
void put_pair(PairCells& cells, std::size_t m, std::size_t i, std::size_t j, const std::vector<double>& reps) {
  const auto s = compute_stats(reps);
  const double v[3] = {s.median, std::max(0.0, (s.median - s.min) / s.median), std::max(0.0, (s.max - s.median) / s.median)};
  for (std::size_t t = 0; t < 3; ++t) cells[t][i * m + j] = cells[t][j * m + i] = v[t];
}

PairMatrix as_matrix(const PairCells& cells, std::vector<std::string> hosts, std::vector<std::vector<int>> ranks) {
  const std::size_t m = hosts.size();
  PairMatrix out;
  out.hosts = std::move(hosts);
  out.ranks = std::move(ranks);
  for (std::size_t t = 0; t < 3; ++t) {
    auto& rows = t == 0 ? out.values : t == 1 ? out.spread_down : out.spread_up;
    rows.assign(m, std::vector<double>(m));
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < m; ++j) rows[i][j] = cells[t][i * m + j];
  }
  return out;
}

PairCells empty_cells(std::size_t m) {
  PairCells c;
  for (auto& t : c) t.assign(m * m, std::numeric_limits<double>::quiet_NaN());
  return c;
}

}  // namespace

NoiseModel default_noise() {
  const RunOptions run;  // the run's methodology at its defaults
  NoiseModel n;
  n.gemm_reps = gemm_methodology(run).reps;
  n.stream_reps = kernel_methodology(run).reps;
  n.pair_reps = collective_methodology(run).reps;
  n.ckpt_reps = checkpoint_methodology(run).reps;
  return n;
}

std::string host_name(int node) { return fmt::format("node{:04d}", node); }
std::string gpu_id(const std::string& host, int local) { return fmt::format("{}:gpu{}", host, local); }
std::string rail_id(const std::string& host, int rail) { return fmt::format("{}:rail{}", host, rail); }
std::string link_id(const std::string& host, int a, int b) {
  return fmt::format("{}:gpu{}-gpu{}", host, std::min(a, b), std::max(a, b));
}

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a + 0x9E3779B97F4A7C15ULL * (b + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::mt19937_64 stream(std::uint64_t trial_seed, std::string_view name, std::uint64_t index) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a of the name
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ULL;
  return std::mt19937_64(mix(mix(trial_seed, h), index));
}

Places draw_places(const FleetShape& shape, std::uint64_t trial_seed) {
  auto gen = stream(trial_seed, "where");
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(gen); };
  Places p;
  p.gemm_gpu = pick(shape.gpus);
  p.stream_gpu = pick(shape.gpus);
  p.flaky_gpu = pick(shape.gpus);
  p.throttle_gpu = pick(shape.gpus);
  p.nic_node = pick(shape.nodes());
  p.nic_rail = pick(shape.gpus_per_node);
  p.link_node = pick(shape.nodes());
  p.link_a = pick(shape.gpus_per_node);
  p.link_b = (p.link_a + 1 + pick(shape.gpus_per_node - 1)) % shape.gpus_per_node;  // another GPU of the node
  if (p.link_a > p.link_b) std::swap(p.link_a, p.link_b);
  p.storage_node = pick(shape.nodes());  // drawn last: the other places are those of earlier tables
  return p;
}

GroupRows group_rows(const FleetShape& shape, const NoiseModel& noise, std::uint64_t trial_seed, std::string_view benchmark) {
  const auto p = point_of(benchmark);
  const int reps = benchmark == "gemm" ? noise.gemm_reps : noise.stream_reps;
  const KindNoise& kind = benchmark == "gemm" ? noise.gemm : noise.hbm;
  auto gen = stream(trial_seed, benchmark);
  GroupRows out;
  std::vector<GroupRow> groups;
  for (int g = 0; g < shape.gpus; ++g) {
    out.reps.push_back(repetitions(gen, p.base * own_speed(gen, kind.spread), kind.rep, reps));
    RowGroup group;
    group.hosts = {host_name(g / shape.gpus_per_node)};
    group.ranks = {g};
    groups.push_back({std::move(group), one_gpu_row(shape, p, g, out.reps.back())});
  }
  out.rows.push_back(combine_group_rows(std::move(groups), {}));
  return out;
}

// Group `index` of the combined row refilled from its own rebuilt row, as combine_group_rows fills each
// group; the combined row's median group (its aggregate) is left as it was, which the outlier rule
// does not read.
void refill_group(GroupRows& rows, std::size_t index, const ResultRow& row) {
  auto& g = rows.rows.front().groups[index];
  g.status = row.status;
  g.value = row.status == RowStatus::ok ? row.aggregate : std::nullopt;
  std::tie(g.spread_down, g.spread_up) = group_spread(row);
}

void replace_group(GroupRows& rows, const FleetShape& shape, std::string_view benchmark, int gpu, std::vector<double> reps) {
  refill_group(rows, static_cast<std::size_t>(gpu), one_gpu_row(shape, point_of(benchmark), gpu, std::move(reps)));
}

GroupRows node_rows(const FleetShape& shape, const NoiseModel& noise, std::uint64_t trial_seed) {
  auto gen = stream(trial_seed, "storage");
  GroupRows out;
  std::vector<GroupRow> groups;
  for (int n = 0; n < shape.nodes(); ++n) {
    const double node_speed = own_speed(gen, noise.storage_spread);
    std::vector<std::vector<double>> reps;
    RowGroup group;
    group.hosts = {host_name(n)};
    for (int local = 0; local < shape.gpus_per_node; ++local) {
      reps.push_back(repetitions(gen, kCkptRankGbs * node_speed, noise.storage_rep_noise, noise.ckpt_reps));
      out.reps.push_back(reps.back());
      group.ranks.push_back(n * shape.gpus_per_node + local);
    }
    groups.push_back({std::move(group), node_row(shape, n, reps)});
  }
  out.rows.push_back(combine_group_rows(std::move(groups), {}));
  return out;
}

void replace_node(GroupRows& rows, const FleetShape& shape, int node, const std::vector<std::vector<double>>& reps) {
  refill_group(rows, static_cast<std::size_t>(node), node_row(shape, node, reps));
}

std::vector<double> faulty_reps(const std::vector<double>& reps, const Fault& fault, const NoiseModel& noise,
                                std::uint64_t trial_seed) {
  auto out = reps;
  auto gen = stream(trial_seed, "flaky");  // the same repetitions are slow at every size
  std::bernoulli_distribution slow(fault.kind == FaultKind::flaky ? noise.flaky_p : 1.0);
  for (auto& r : out)
    if (slow(gen)) r *= 1 - fault.size;
  return out;
}

PairMatrix rail_matrix(const FleetShape& shape, const NoiseModel& noise, std::uint64_t trial_seed, int rail,
                       const OutlierRule& rule, std::optional<int> slow_node, double size) {
  const auto m = static_cast<std::size_t>(shape.nodes());
  auto gen = stream(trial_seed, "rail", static_cast<std::uint64_t>(rail));
  std::vector<double> nic(m);
  for (auto& s : nic) s = own_speed(gen, noise.nic.spread);
  if (slow_node) nic[static_cast<std::size_t>(*slow_node)] *= 1 - size;
  std::vector<std::string> hosts;
  std::vector<std::vector<int>> ranks;
  for (std::size_t n = 0; n < m; ++n) {
    hosts.push_back(host_name(static_cast<int>(n)));
    ranks.push_back({static_cast<int>(n) * shape.gpus_per_node + rail});
  }
  const auto measure = [&](PairCells& cells, std::mt19937_64& g, std::size_t i, std::size_t j) {
    put_pair(cells, m, i, j, repetitions(g, kRailGbs * std::min(nic[i], nic[j]), noise.nic.rep, noise.pair_reps));
  };
  auto pass = [&](std::mt19937_64& g) {
    auto cells = empty_cells(m);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = i + 1; j < m; ++j) measure(cells, g, i, j);
    return cells;
  };
  auto cells = pass(gen);
  // As fleet_pairs.cpp: a second pass when the first shows a suspect, then the pairs still suspect once
  // more (the tournament's rounds: m - 1, or m for an odd m).
  if (pass_has_suspects(cells, hosts, ranks, rule)) {
    auto again = stream(trial_seed, "rail pass 2", static_cast<std::uint64_t>(rail));
    cells = best_cells(cells, pass(again));
    auto third = stream(trial_seed, "rail pass 3", static_cast<std::uint64_t>(rail));
    auto cells3 = empty_cells(m);
    for (const auto& p : third_pass_pairs(suspect_pairs(cells, hosts, ranks, rule), m % 2 ? m : m - 1))
      measure(cells3, third, static_cast<std::size_t>(p.a), static_cast<std::size_t>(p.b));
    cells = best_cells(cells, cells3);
  }
  return as_matrix(cells, std::move(hosts), std::move(ranks));
}

PairMatrix gpu_pair_matrix(const FleetShape& shape, const NoiseModel& noise, std::uint64_t trial_seed, int node,
                           std::optional<std::pair<int, int>> slow_link, double size) {
  const auto g = static_cast<std::size_t>(shape.gpus_per_node);
  auto gen = stream(trial_seed, "gpu pairs", static_cast<std::uint64_t>(node));
  auto cells = empty_cells(g);
  for (std::size_t a = 0; a < g; ++a)
    for (std::size_t b = a + 1; b < g; ++b) {
      double link = own_speed(gen, noise.nvlink.spread);
      if (slow_link && static_cast<std::size_t>(slow_link->first) == a && static_cast<std::size_t>(slow_link->second) == b)
        link *= 1 - size;
      put_pair(cells, g, a, b, repetitions(gen, kLinkGbs * link, noise.nvlink.rep, noise.pair_reps));
    }
  const auto host = host_name(node);
  std::vector<std::vector<int>> ranks;
  for (std::size_t a = 0; a < g; ++a) ranks.push_back({node * shape.gpus_per_node + static_cast<int>(a)});
  return as_matrix(cells, std::vector<std::string>(g, host), std::move(ranks));
}

std::string run_time(int run) { return fmt::format("2026-12-03T{:02d}:{:02d}:00Z", run / 60, run % 60); }

std::vector<history::Series> gpu_series(const FleetShape& shape, const NoiseModel& noise, std::uint64_t trial_seed) {
  const auto p = point_of("gemm");
  auto gen = stream(trial_seed, "history");
  std::normal_distribution<double> run_to_run(1.0, noise.run_noise);
  std::vector<history::RankPoint> points;
  points.reserve(static_cast<std::size_t>(shape.gpus) * static_cast<std::size_t>(noise.runs));
  for (int g = 0; g < shape.gpus; ++g) {
    const double speed = own_speed(gen, noise.gemm.spread);
    const auto host = host_name(g / shape.gpus_per_node);
    for (int run = 1; run <= noise.runs; ++run) {
      history::RankPoint k;
      k.row.run_id = fmt::format("run{}", run);
      k.row.created_utc = run_time(run);
      k.row.cluster = "synthetic";
      k.row.software = "{}";
      k.row.benchmark = p.benchmark;
      k.row.scope = "independent";
      k.row.params = p.params;
      k.row.unit = p.unit;
      k.row.status = "ok";
      k.host = host;
      k.gpu = gpu_id(host, g % shape.gpus_per_node);
      k.rank = g;
      RankValue alone;  // the rank's band by the readers' one rule, as run_record stores it
      alone.stats = compute_stats(repetitions(gen, p.base * speed * std::max(0.05, run_to_run(gen)), noise.gemm.rep,
                                              noise.gemm_reps));
      alone.value = alone.stats.median;
      k.value = alone.value;
      if (const auto own = spread_of_ranks({alone}); own && own->reps >= 2) {
        k.noise_down = std::max(own->down, 0.0);
        k.noise_up = std::max(own->up, 0.0);
        k.reps = static_cast<int>(own->reps);
      }
      points.push_back(std::move(k));
    }
  }
  return history::rank_series(points, true);
}

}  // namespace gpuscale::detection
