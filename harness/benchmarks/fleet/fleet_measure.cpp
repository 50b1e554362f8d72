#include "harness/benchmarks/fleet/fleet_measure.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "backends/backend.h"
#include "core/stats.h"
#include "harness/benchmarks/collective_plan.h"
#include "harness/benchmarks/comm_timing.h"
#include "harness/benchmarks/watched_communicator.h"
#include "world/test_hosts.h"

namespace gpuscale::fleet {
namespace {

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

}  // namespace

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

PairComm open_pair(const Group& pair, RunContext& ctx) {
  PairComm out;
  try {
    auto made = timed_communicator([&] { return ctx.backend->make_communicator(pair, ctx.comm); }, &out.init_s);
    if (made) out.comm = watch_communicator(std::move(made));
  } catch (const CommunicatorAborted&) {
    throw;  // the run ends (harness/run/runner.cpp)
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

PairResult run_pair(const Benchmark& inner, const nlohmann::json& params, const Group& pair, PairComm& made,
                    RunContext& ctx, const std::string& name, RankMeasurement& out) {
  PairResult r;
  RankMeasurement m;
  try {
    if (!made.error.empty()) throw Error(fmt::format("creating the pair's communicator: {}", made.error));
    if (!made.comm) throw Error("the pair's communicator was not made (internal)");
    auto& comm = made.comm;
    const double init_s = made.init_s;
    auto& init = out.metrics["init_s"];  // this rank's pair communicators: how many, their total and slowest
    if (!init.is_object()) init = nlohmann::json::object();
    init["count"] = init.value("count", 0) + 1;
    init["total"] = init.value("total", 0.0) + init_s;
    init["max"] = std::max(init.value("max", 0.0), init_s);
    const RunOptions own = with_one_size(ctx.opts, params.at("size_bytes").get<std::uint64_t>());
    RunContext sub{ctx.device, comm.get(), pair, own, ctx.seed, ctx.backend, ctx.hosts};
    m = inner.run(params, sub);
  } catch (const CommunicatorAborted&) {
    throw;  // the run ends (harness/run/runner.cpp)
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

void add_record(std::vector<double>& records, double cell, const PairResult& r) {
  records.insert(records.end(), {cell, r.value, r.down, r.up});
}

std::vector<PairCells> gather_cells(const Group& group, const std::vector<double>& mine, std::size_t matrices,
                                    std::size_t m) {
  return place_records(group.allgather(mine), matrices, m, false);
}

nlohmann::json matrix_json(const char* kind, const std::vector<std::string>& hosts, const nlohmann::json& labels,
                           const nlohmann::json& ranks, const PairCells& cells) {
  const std::size_t m = hosts.size();
  return {{"kind", kind},
          {"hosts", hosts},
          {"labels", labels},
          {"ranks", ranks},
          {"values", json_matrix(cells[0], m)},
          {"spread_down", json_matrix(cells[1], m)},
          {"spread_up", json_matrix(cells[2], m)},
          {"directed", false}};
}

double median_of_pairs(const std::vector<double>& cells, std::size_t m) {
  std::vector<double> v;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = i + 1; j < m; ++j)
      if (std::isfinite(cells[i * m + j])) v.push_back(cells[i * m + j]);
  return median_of(v);
}

}  // namespace gpuscale::fleet
