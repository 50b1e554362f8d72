#include "harness/run/row_measure.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "core/fault.h"
#include "core/stats.h"
#include "harness/benchmarks/comm_timing.h"
#include "harness/benchmarks/watched_communicator.h"
#include "harness/plan/rep_order_plan.h"
#include "harness/registry.h"
#include "harness/rows/measurement_json.h"
#include "harness/rows/row_builder.h"
#include "harness/rows/row_flags.h"
#include "harness/rows/row_groups.h"
#include "harness/run/group_confirm.h"
#include "harness/run/repetition_turns.h"
#include "harness/run/run_cost.h"
#include "health/virtual_gpu.h"
#include "world/activity.h"

namespace gpuscale {

namespace {

// The count's communicator, made when its first row that needs one starts: split from the job's, so
// every world rank takes part (an idle rank and the members of later rounds too) and gets one only in
// its group. Its seconds (this rank's wait for the last to arrive) go to the row as init_s. An error
// other than an abort is kept for the members' measurement to report.
struct CountComm {
  std::optional<double> init_s;
  std::string error;
};

CountComm open_count_communicator(const Benchmark& b, CountGroups& count, const RowRun& run) {
  CountComm out;
  if (b.scope() != Scope::collective || count.comm_made) return out;
  ActivityScope setup(Phase::collective, "creating the communicator");
  count.comm_made = true;
  try {
    double s = 0;
    auto made = timed_communicator([&] { return run.backend.make_communicator(*count.group, nullptr); }, &s);
    if (made) count.comm = watch_communicator(std::move(made));
    out.init_s = s;
  } catch (const CommunicatorAborted&) {
    throw;
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

// This rank's measurement of the point in its group.
RankMeasurement measure_mine(const Benchmark& b, const nlohmann::json& params, CountGroups& count, std::uint64_t seed,
                             const RowRun& run, const CountComm& made, RepetitionGate* gate = nullptr) {
  RankMeasurement m;
  auto window = run.telemetry.watch();  // NVML samples this rank's GPU while it measures
  (void)run.backend.take_communicator_memory_peak();  // from what the communicators hold now
  try {
    Communicator* comm = nullptr;
    if (b.scope() == Scope::collective) {
      if (!made.error.empty()) throw Error(fmt::format("creating the communicator: {}", made.error));
      if (!count.comm) throw Error("this GPU count's communicator is missing (internal: freed before its last row)");
      comm = count.comm.get();
    }
    RunContext ctx{run.backend.device(), comm, *count.group, run.opts, seed, &run.backend, &run.world.hosts(), gate};
    ActivityScope working(Phase::computing, b.key());
    if (fault_injected("fail:" + b.key())) throw Error("injected failure (GPUSCALE_TEST_FAULT)");
    if (fault_injected(fmt::format("stall:{}@{}", b.key(), run.world.rank()))) {
      ActivityScope stalled(Phase::computing, b.key() + " (injected stall, GPUSCALE_TEST_FAULT)");
      stall_for_test();
    }
    RunCost::Scope cost(run_cost(), RunCost::Part::benchmark);  // recorded on rank 0 only (written there)
    m = b.run(params, ctx);
    // The device memory this rank's communicators held during the point (the count's, the job's, and
    // any the point made itself), where the backend measures it.
    if (auto held = run.backend.take_communicator_memory_peak()) m.metrics["comm_memory_bytes"] = *held;
  } catch (const CommunicatorAborted&) {
    throw;  // the group cannot measure again: the run ends (runner.cpp)
  } catch (const std::exception& e) {
    m = RankMeasurement{};
    m.failed = true;
    m.message = e.what();
  }
  run.telemetry.attach(window, m.metrics);
  return m;
}

// How the ranks' GPUs are shared (health/virtual_gpu.h): whole GPUs, or vGPUs and their share.
health::PeakShare vgpu_share(const std::vector<int>& ranks, const nlohmann::json& identities) {
  std::vector<health::VirtualGpu> gpus;
  for (int r : ranks) gpus.push_back(health::virtual_gpu_of(identities[static_cast<std::size_t>(r)]));
  return health::vgpu_peak_share(gpus);
}

// A pass the row keeps whatever the other: failed, wrong or skipped.
bool bad_pass(const RankMeasurement& x) { return x.failed || !x.valid || x.skipped; }

// A pass's figure: the group's aggregate where the benchmark gives one, else this rank's median repetition.
double pass_score(const RankMeasurement& x) {
  if (x.aggregate) return *x.aggregate;
  return x.reps.empty() ? 0.0 : median_of(x.reps);
}

// Of two passes of one rank over the same point, the one the row keeps: a failed, wrong or skipped
// pass (a wrong result never hides behind a good one), else the better figure: the group's
// aggregate where the benchmark gives one (identical on every member, so the group keeps one pass),
// else this rank's median repetition (every row unit is higher-is-better). Why two passes: a group
// measured alone in a single turn is at the mercy of whatever else the host does during that turn
// (a daemon, a page-cache flush; on a machine of more ranks than cores, time-correlated noise that
// once put three consecutive hosts 66-70% below the median with nothing planted). A sick GPU is slow
// in both turns; a moment's stall is not. STREAM reports its best time for the same reason.
RankMeasurement better_pass(RankMeasurement first, RankMeasurement second) {
  if (bad_pass(first)) return first;
  if (bad_pass(second)) return second;
  return pass_score(second) > pass_score(first) ? second : first;
}

// Interleaved repetitions (harness/plan/rep_order_plan.h): every group sets up at once, then the
// rounds take turns one timed repetition at a time, in one pass; the driver waits at RepetitionTurns.
RankMeasurement measure_interleaved(const Benchmark& b, const nlohmann::json& params, CountGroups& count,
                                    std::uint64_t seed, const RowRun& run, const CountComm& made, int reps) {
  int round = -1;  // this rank's round, or none when it is idle at this count
  for (std::size_t q = 0; count.mine >= 0 && q < count.rounds.size(); ++q)
    if (std::find(count.rounds[q].begin(), count.rounds[q].end(), count.mine) != count.rounds[q].end())
      round = static_cast<int>(q);
  RepetitionTurns turns(run.world, repetition_turns(count.rounds.size(), reps, RepOrder::interleaved), round);
  RankMeasurement m;
  if (round >= 0) m = measure_mine(b, params, count, seed, run, made, &turns);
  turns.finish();  // the turns this rank did not wait through: all of them when it measured nothing
  return m;
}

// Sequential tiling's third turn (harness/run/group_confirm.h): rank 0 gathers each rank's kept score,
// picks the groups still slow, and those take one more turn each, every other rank asleep.
void measure_suspects_again(RankMeasurement& m, const Benchmark& b, const nlohmann::json& params, CountGroups& count,
                            std::uint64_t seed, const RowRun& run, const CountComm& made) {
  const double mine = count.mine >= 0 && !bad_pass(m) ? pass_score(m) : std::nan("");
  const auto scores = run.world.gather_to_root(fmt::format("{}", mine));
  std::string list;
  if (run.world.rank() == 0) {
    std::vector<double> figures;
    for (const auto& g : count.tiling.groups) {
      double sum = 0;
      for (int r : g.ranks) sum += std::strtod(scores[static_cast<std::size_t>(r)].c_str(), nullptr);
      figures.push_back(g.ranks.empty() ? std::nan("") : sum / static_cast<double>(g.ranks.size()));
    }
    for (std::size_t g : groups_to_confirm(figures, std::max(run.opts.outlier, run.opts.min_effect), confirm_cap(figures.size())))
      list += fmt::format("{} ", g);
  }
  std::istringstream again(run.world.broadcast_from_root(list));
  for (std::size_t g = 0; again >> g;) {
    if (count.mine >= 0 && static_cast<std::size_t>(count.mine) == g)
      m = better_pass(std::move(m), measure_mine(b, params, count, seed, run, made));
    run.world.turn_barrier();
  }
}

// What the row's flags are judged with: the run's --quick, the point's buffers per rank, and the
// cache of rank 0's device (the CPU's last-level cache, which a node's ranks share; a GPU's own L2).
FlagContext flag_context(const Benchmark& b, const nlohmann::json& params, const ResultRow& row, const CountGroups& count,
                         const RowRun& run) {
  const DeviceInfo& dev = run.backend.device().info();
  FlagContext ctx;
  ctx.quick = run.opts.quick;
  ctx.memory_benchmark = b.group() == "stream";
  ctx.efficiency_is_peak = b.efficiency() == Efficiency::link_peak;
  const auto demand = b.demand(params, DemandContext{run.opts, dev.backend, row.gpu_count});
  if (demand.memory_bytes > 0) ctx.footprint_bytes = demand.memory_bytes;
  std::vector<int> ranks;
  for (const auto& rv : row.ranks) ranks.push_back(rv.rank);
  ctx.virtual_gpu = vgpu_share(ranks, run.ranks).flag;
  const bool cpu = dev.backend == "cpu";
  const auto& d = dev.details;
  const char* key = cpu ? "last_level_cache_bytes" : "l2_cache_bytes";
  if (d.is_object() && d.contains(key) && d[key].is_number_integer() && d[key].get<std::int64_t>() > 0)
    ctx.cache_bytes = static_cast<std::uint64_t>(d[key].get<std::int64_t>());
  ctx.cache_name = cpu ? (d.is_object() ? d.value("last_level_cache", std::string()) : std::string()) : "L2";
  if (cpu)  // the ranks measuring at once (a round's groups) on the busiest host share its cache
    for (const auto& round : count.rounds) {
      std::map<std::string, int> per_host;
      for (int g : round)
        for (int r : count.tiling.groups[static_cast<std::size_t>(g)].ranks)
          ctx.ranks_sharing_cache = std::max(ctx.ranks_sharing_cache, ++per_host[run.world.hosts()[static_cast<std::size_t>(r)]]);
    }
  return ctx;
}

}  // namespace

std::vector<std::vector<bool>> rows_on_communicators(const nlohmann::json& points, const std::vector<bool>& kept,
                                                     const std::vector<int>& counts, int world_size) {
  std::vector<std::vector<bool>> needs;
  for (std::size_t pi = 0; pi < points.size(); ++pi) {
    const Benchmark* b = registry().find(points[pi]["benchmark"].get<std::string>());
    const bool needs_one = b != nullptr && b->scope() == Scope::collective && !(pi < kept.size() && kept[pi]);
    std::vector<bool> row(counts.size(), false);
    for (std::size_t ki = 0; ki < counts.size(); ++ki)
      row[ki] = needs_one && (!b->info().whole_job || counts[ki] == world_size);
    needs.push_back(std::move(row));
  }
  return needs;
}

void free_count_communicator(CountGroups& count) {
  ActivityScope freeing(Phase::collective, "freeing the communicator");
  count.comm.reset();
}

CountGroups make_count_groups(const World& world, int k, TilingMode mode) {
  CountGroups c;
  c.tiling = tile(world.hosts(), world.local_ranks(), k, mode);
  c.rounds = tiling_rounds(c.tiling);
  c.mine = group_of_rank(c.tiling, world.rank());
  int key = 0;  // the rank's place in its group: groups list their ranks in node order
  if (c.mine >= 0) {
    const auto& ranks = c.tiling.groups[static_cast<std::size_t>(c.mine)].ranks;
    key = static_cast<int>(std::find(ranks.begin(), ranks.end(), world.rank()) - ranks.begin());
  }
  c.group = std::make_unique<Group>(world, c.mine, key);
  return c;
}

ResultRow measure_row(const Benchmark& b, const nlohmann::json& params, CountGroups& count, std::uint64_t seed,
                      const std::optional<double>& single, const RowRun& run) {
  RankMeasurement m;
  const CountComm made = open_count_communicator(b, count, run);  // every rank, before the turns
  // Sequential tiling: the groups take turns. Interleaved (the default, for a benchmark whose timed
  // repetitions can wait at a gate), one repetition a turn in one pass: each group's repetitions are
  // spread over the whole span, so a slow stretch of the machine weighs on every group alike, and a
  // moment's stall costs a group one repetition, which its median ignores: what the second pass was
  // for (on a 2-core VM the typical launch of one interleaved pass spread 16 STREAM groups as far as
  // two blocked passes, in 60-80% of the time: docs/measurements.md, "Interleaved repetitions"). Blocked, a group times all its repetitions in
  // its turn, in two passes (the second in reverse order), keeping its better pass (better_pass). Either
  // way a group still slow takes a third turn (measure_suspects_again).
  const bool sequential = count.rounds.size() > 1;
  const auto gated = b.timed_repetitions(params, run.opts);
  const RowOrder order = row_order(count.rounds.size(), run.opts.rep_order, gated);
  if (order == RowOrder::interleaved) m = measure_interleaved(b, params, count, seed, run, made, *gated);
  else
    for (int pass = 0; pass < (sequential ? 2 : 1); ++pass)
      for (std::size_t i = 0; i < count.rounds.size(); ++i) {
        const auto& round = count.rounds[pass == 0 ? i : count.rounds.size() - 1 - i];
        if (count.mine >= 0 && std::find(round.begin(), round.end(), count.mine) != round.end()) {
          auto mine = measure_mine(b, params, count, seed, run, made);
          m = pass == 0 ? std::move(mine) : better_pass(std::move(m), std::move(mine));
        }
        // The others wait for the turn asleep, leaving their cores to the measuring group (world/patient_wait.h).
        if (sequential) run.world.turn_barrier();
      }
  if (sequential) measure_suspects_again(m, b, params, count, seed, run, made);
  // How the row's repetitions were ordered in time, unless the benchmark orders its own (the fleet's pairs).
  if (count.mine >= 0 && !m.row_metrics.contains("rep_order")) m.row_metrics["rep_order"] = std::string(row_order_name(order));
  // The communicator's creation (collective: all ranks wait for the last), on the row that made it,
  // whichever pass the row keeps, with what the point spent on its own.
  if (made.init_s && count.mine >= 0 && !m.failed) {
    const auto own = m.row_metrics.find("init_s");  // the point's own communicators (train-step's)
    m.row_metrics["init_s"] = *made.init_s + (own != m.row_metrics.end() && own->is_number() ? own->get<double>() : 0.0);
  }
  // Each rank reduces its repetitions itself; one two-level gather brings the summaries to rank 0.
  const bool first = count.mine >= 0 && count.group->rank() == 0;
  std::vector<std::string> gathered;
  {
    RunCost::Scope cost(run_cost(), RunCost::Part::gather);
    gathered = run.world.gather_to_root(count.mine >= 0 ? encode_summary(summarize(m, first)) : std::string());
  }
  if (run.world.rank() != 0) return {};
  RunCost::Scope cost(run_cost(), RunCost::Part::build);
  run_cost().row_done();
  const int k = count.tiling.k;
  const DeviceInfo& dev = run.backend.device().info();
  std::vector<GroupRow> parts;
  for (const auto& g : count.tiling.groups) {
    RowInputs in;
    in.benchmark = b.key();
    in.scope = b.scope();
    in.unit = b.unit();
    in.params = params;
    in.gpu_count = k;
    in.nodes = static_cast<int>(g.nodes.size());
    in.topology = group_topology(k, in.nodes);
    in.single_rank_value = single;
    in.efficiency = b.efficiency();
    for (int r : g.ranks) {
      const auto& id = run.ranks[static_cast<std::size_t>(r)];
      in.ranks.push_back({r, id["host"].get<std::string>(), id["device"]["index"].get<int>(),
                          decode_summary(gathered[static_cast<std::size_t>(r)])});
    }
    in.peak = b.expected_peak(params, PeakContext{dev, run.backend.peaks(), run.links}, in.topology);
    if (b.efficiency() != Efficiency::link_peak) in.peak = health::shared_peak(in.peak, vgpu_share(g.ranks, run.ranks));
    RowGroup group;
    group.hosts = group_hosts(g, run.world.hosts());
    group.ranks = g.ranks;
    parts.push_back({std::move(group), build_row(in)});
  }
  auto row = combine_group_rows(std::move(parts), count.tiling.idle);
  health::flag_throttled(row);  // measurements taken while a GPU was throttled say so
  health::add_row_energy(row);   // energy_j, avg_power_w, work per joule from the ranks' counters
  row.flags = row_flags(row, flag_context(b, params, row, count, run));
  return row;
}

}  // namespace gpuscale
