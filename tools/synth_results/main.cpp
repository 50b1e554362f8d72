// gpuscale-synth-results --ranks R --points P -o FILE: a synthetic result file of R ranks and P rows, made
// through the run's own code (tiling, row builder, group rows, result keeper), so it is a valid result of
// the current schema and as large as a real run of that size. For testing and timing the readers at
// scale (docs/scale.md); values are random, the cluster is named "synthetic", and every host is made up.
#include <algorithm>
#include <random>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/error.h"
#include "harness/guard/result_keeper.h"
#include "harness/plan/plan.h"
#include "harness/plan/tiling.h"
#include "harness/rows/row_builder.h"
#include "harness/rows/row_groups.h"
#include "harness/run/run_metadata.h"
#include "harness/run/run_summary.h"
#include "results/result_document.h"

namespace gpuscale {
namespace {

struct Synth {
  int ranks = 64, points = 100, per_node = 8;
  std::uint64_t seed = 1;
  std::string output;
  bool force = false;
};

// The plan's points: all_reduce at sizes 8 B .. 1 GiB, then STREAM triad at growing arrays, alternating.
nlohmann::json point_of(std::size_t i) {
  if (i % 2 == 0) {
    const auto size = std::uint64_t{8} << ((i / 2) % 28);
    return {{"benchmark", "all_reduce"},
            {"params", {{"dtype", "fp32"}, {"op", "sum"}, {"placement", "out-of-place"}, {"size_bytes", size},
                        {"variant", i / 56}}}};
  }
  const auto elements = std::uint64_t{1} << (20 + (i / 2) % 8);
  return {{"benchmark", "stream.triad"},
          {"params", {{"dtype", "fp64"}, {"elements", elements}, {"array_bytes", elements * 8}, {"variant", i / 16}}}};
}

// One rank's measurement: five repetitions around `base`, scaled by its node's own speed.
RankMeasurement measurement(bool collective, double base, double node_speed, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(1.0, 0.02);
  RankMeasurement m;
  for (int r = 0; r < 5; ++r) m.reps.push_back(std::max(1e-6, base * node_speed * noise(rng)));
  if (collective) {
    m.metrics = {{"time_us", 1e3 / (base * node_speed)}, {"wrong", 0}};
  } else {
    const double best = *std::max_element(m.reps.begin(), m.reps.end());
    m.metrics = {{"best_gb_s", best}, {"best_time_us", 1e6 / best}, {"checked", 1 << 20}, {"wrong", 0}};
  }
  return m;
}

int synthesize(const Synth& s) {
  if (s.ranks < 1 || s.points < 1 || s.per_node < 1) throw Error("--ranks, --points and --ranks-per-node must be at least 1");
  std::mt19937_64 rng(s.seed);
  std::vector<std::string> hosts;
  std::vector<int> local;
  nlohmann::json identities = nlohmann::json::array();
  for (int r = 0; r < s.ranks; ++r) {
    hosts.push_back(fmt::format("node{:04d}", r / s.per_node));
    local.push_back(r % s.per_node);
    DeviceInfo dev;
    dev.backend = "cpu";
    dev.name = "synthetic device";
    dev.index = r % s.per_node;
    identities.push_back(rank_identity(r, hosts.back(), local.back(), dev));
  }
  const auto counts = gpu_counts(s.ranks);
  std::vector<double> node_speed;  // each node a little faster or slower
  std::uniform_real_distribution<double> spread(0.9, 1.1);
  for (int n = 0; n <= (s.ranks - 1) / s.per_node; ++n) node_speed.push_back(spread(rng));

  nlohmann::json plan_points = nlohmann::json::array();
  const std::size_t point_count = (static_cast<std::size_t>(s.points) + counts.size() - 1) / counts.size();
  for (std::size_t i = 0; i < point_count; ++i) plan_points.push_back(point_of(i));
  ResultHeader h;
  h.started = std::chrono::system_clock::now();
  h.cluster = {"synthetic", "--cluster"};
  h.backend = "cpu";
  h.command_line = {"gpuscale-synth-results", "--ranks", std::to_string(s.ranks), "--points", std::to_string(s.points)};
  h.mpi_library = "synthetic";
  h.world_size = s.ranks;
  h.software = {{"blas", nullptr}, {"cuda_runtime", nullptr}, {"driver", nullptr}, {"nccl", nullptr}};
  h.points = plan_points;
  h.gpu_counts = counts;
  h.seed = s.seed;
  h.options = nlohmann::json::object();
  std::vector<ResultRow> rows;
  h.summary = summary_json(rows, false, 0, "");
  auto doc = result_header(h);
  doc["ranks"] = identities;
  doc["hosts"] = hosts_json(make_topology(hosts, local), hosts, identities);
  doc["run_id"] = fmt::format("synthetic-{}", s.seed);

  ResultKeeper keeper;
  keeper.open(s.output, s.force, doc, {}, doc["run_id"], 0);
  std::size_t made = 0;
  for (std::size_t pi = 0; pi < point_count && made < static_cast<std::size_t>(s.points); ++pi) {
    const auto& point = plan_points[pi];
    const bool collective = point["benchmark"] == "all_reduce";
    std::optional<double> single;
    std::vector<ResultKeeper::Line> lines;
    for (int k : counts) {
      if (made == static_cast<std::size_t>(s.points)) break;
      const auto tiling = tile(hosts, local, k, TilingMode::concurrent);
      std::vector<GroupRow> parts;
      for (const auto& g : tiling.groups) {
        RowInputs in;
        in.benchmark = point["benchmark"];
        in.scope = collective ? Scope::collective : Scope::independent;
        in.unit = "GB/s";
        in.params = point["params"];
        in.gpu_count = k;
        in.nodes = static_cast<int>(g.nodes.size());
        in.topology = group_topology(k, in.nodes);
        in.single_rank_value = single;
        const double base = collective ? 50.0 : 20.0;
        for (int r : g.ranks) {
          auto m = measurement(collective, base, node_speed[static_cast<std::size_t>(r / s.per_node)], rng);
          if (collective) {
            m.aggregate = base * node_speed[static_cast<std::size_t>(g.ranks.front() / s.per_node)];
            m.row_metrics = {{"size_bytes", point["params"]["size_bytes"]}, {"busbw", *m.aggregate}, {"algbw", *m.aggregate / 1.5},
                             {"time_us", 20.0}, {"wrong", 0}};
          }
          // As the run gathers it: reduced on the rank, group-wide figures from the first (harness/rows/measurement_json.h).
          in.ranks.push_back({r, hosts[static_cast<std::size_t>(r)], r % s.per_node, summarize(m, r == g.ranks.front())});
        }
        RowGroup group;
        group.hosts = group_hosts(g, hosts);
        group.ranks = g.ranks;
        parts.push_back({std::move(group), build_row(in)});
      }
      auto row = combine_group_rows(std::move(parts), tiling.idle);
      if (k == 1 && row.status == RowStatus::ok) single = row.aggregate;
      nlohmann::json j = row;
      j["attempt"] = 0;
      lines.push_back({pi, k, result_row_line(j)});
      rows.push_back(std::move(row));
      ++made;
    }
    keeper.append(std::move(lines), summary_json(rows, false, 0, ""));
  }
  // Complete only when every planned point has its row at every GPU count: --points that ends inside a
  // point leaves it short, as a run stopped there would (the semantic validator holds a file to it).
  const bool complete = made == point_count * counts.size();
  doc["summary"] = complete ? summary_json(rows, true, 0, "")
                            : summary_json(rows, false, 4, fmt::format("synthetic: --points {} ends inside the last planned point", s.points));
  doc["finished_utc"] = utc_timestamp(std::chrono::system_clock::now());
  keeper.finish(doc);
  fmt::print("{}: {} ranks ({} per node), {} rows, {} bytes written\n", s.output, s.ranks, s.per_node, made,
             keeper.bytes_written());
  return kExitOk;
}

}  // namespace
}  // namespace gpuscale

int main(int argc, char** argv) {
  using namespace gpuscale;
  Synth s;
  CLI::App app{"gpuscale-synth-results: a synthetic result file of R ranks and P rows, for testing readers at scale"};
  app.add_option("--ranks", s.ranks, "ranks (GPUs)")->required();
  app.add_option("--points", s.points, "rows (a plan point at one GPU count each)")->required();
  app.add_option("--ranks-per-node", s.per_node, "ranks per made-up node (default 8)");
  app.add_option("--seed", s.seed, "random seed (default 1)");
  app.add_option("-o,--output", s.output, "the result file to write")->required();
  app.add_flag("--force", s.force, "replace an existing file");
  try {
    app.parse(argc, argv);
    return synthesize(s);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const Error& e) {
    fmt::print(stderr, "gpuscale-synth-results: {}\n", e.what());
    return e.exit_code();
  }
}
