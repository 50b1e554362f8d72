#include "harness/runner.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include "backends/backend.h"
#include "core/fault.h"
#include "gpuscale_version.h"
#include "analysis/health_text.h"
#include "analysis/row_text.h"
#include "analysis/stragglers.h"
#include "world/activity.h"
#include "world/agree.h"
#include "harness/measurement_json.h"
#include "harness/memory_plan.h"
#include "harness/plan.h"
#include "harness/progress.h"
#include "harness/registry.h"
#include "harness/guard/result_keeper.h"
#include "harness/resume.h"
#include "harness/row_builder.h"
#include "harness/guard/run_guard.h"
#include "harness/run_metadata.h"
#include "harness/guard/stop_signal.h"
#include "health/run_telemetry.h"
#include "results/result_io.h"

namespace gpuscale {
namespace {

using Clock = std::chrono::system_clock;

struct PlannedPoint {
  const Benchmark* bench;
  nlohmann::json params;
};

// Rank 0 plans; every rank receives the same plan (points and seed).
nlohmann::json make_plan(const RunOptions& opts, Backend& backend, const World& world) {
  const auto benches = registry().select(opts.benchmarks, backend.name(), &backend.device());
  PlanContext ctx{opts, backend.device(), backend.name(), world.size(), backend.collective_transports()};
  nlohmann::json plan = {{"points", nlohmann::json::array()}};
  for (const Benchmark* b : benches)
    for (auto& p : b->cases(ctx)) plan["points"].push_back({{"benchmark", b->key()}, {"params", std::move(p)}});
  if (plan["points"].empty())
    throw Error("nothing to measure: the selected benchmarks have no point for these options (see gpuscale list)");
  // 53 bits: exact in every JSON reader (JavaScript and Python floats included).
  std::random_device rd;
  plan["seed"] = opts.seed ? *opts.seed : ((std::uint64_t{rd()} << 32) ^ rd()) & ((1ULL << 53) - 1);
  return plan;
}

nlohmann::json rank_identity(const World& world, Backend& backend) {
  const auto& d = backend.device().info();
  return {{"rank", world.rank()},
          {"host", world.host()},
          {"pid", static_cast<long long>(::getpid())},
          {"local_rank", world.local_rank()},
          {"device",
           {{"backend", d.backend},
            {"name", d.name},
            {"index", d.index},
            {"memory_bytes", d.memory_bytes},
            {"free_memory_bytes", d.free_memory_bytes},
            {"details", d.details}}}};
}

// No silent overwrite: an existing file is replaced only with --force, or continued with --resume.
void check_no_overwrite(const std::string& path, const RunOptions& opts) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) || opts.force) return;
  if (!opts.resume.empty() && std::filesystem::equivalent(path, opts.resume, ec)) return;
  throw Error(fmt::format("{} already exists: --force replaces it, --resume {} continues the run it holds", path, path));
}

class Run {
 public:
  Run(const RunOptions& opts, World& world) : opts_(opts), world_(world) {}

  int execute() {
    const auto started = Clock::now();
    const auto env = allowed_environment(process_environment());
    const auto cluster = cluster_name(opts_.cluster, env, world_.hosts()[0]);
    const auto slurm = slurm_info(env);

    // --resume FILE: rank 0 reads it, every rank takes the options it records (harness/resume.h).
    nlohmann::json resumed;
    if (!opts_.resume.empty()) {
      std::string text;
      agree(world_, [&] {
        if (world_.rank() == 0) text = read_result_file(opts_.resume).dump();
      });
      text = world_.broadcast_from_root(text);
      agree(world_, [&] {
        resumed = nlohmann::json::parse(text);
        opts_ = adopt_recorded_options(resumed, opts_, opts_.resume);
      });
    }

    // Before anything is measured: the output path, the backend, the plan.
    std::string path = opts_.output.empty() ? opts_.resume : opts_.output;
    bool replace = opts_.force;  // the first write may replace a file: --force, or resuming into it
    agree(world_, [&] {
      if (world_.rank() != 0) return;
      if (path.empty()) {
        path = default_result_path(cluster.name, started, slurm.is_null() ? "" : slurm["job_id"].get<std::string>());
        std::filesystem::create_directories(std::filesystem::path(path).parent_path());
      }
      check_output_path(path);
      check_no_overwrite(path, opts_);
      std::error_code ec;
      replace = replace || (!opts_.resume.empty() && std::filesystem::equivalent(path, opts_.resume, ec));
    });
    std::string why;
    agree(world_, [&] { backend_ = open_backend(opts_.backend, world_, opts_.backend_options, &why); });
    if (world_.rank() == 0) fmt::print(stderr, "gpuscale: {} backend ({})\n", backend_->name(), why);
    agree(world_, [&] { telemetry_ = health::RunTelemetry::open(opts_.telemetry, world_, backend_->device().info(), backend_->software()); });
    auto identity = rank_identity(world_, *backend_);
    identity["telemetry"] = telemetry_->identity();
    const auto identities = world_.gather_to_root(identity.dump());
    nlohmann::json plan;
    std::optional<ResumePlan> resume;
    agree(world_, [&] {
      if (world_.rank() != 0) return;
      if (resumed.is_null()) {
        plan = make_plan(opts_, *backend_, world_);
        return;
      }
      resume = plan_resume(resumed, launch_shape(identities), opts_.resume);
      plan = resume->plan;
      plan["done"] = resume->done;
    });
    plan = nlohmann::json::parse(world_.broadcast_from_root(world_.rank() == 0 ? plan.dump() : ""));
    const std::uint64_t seed = plan["seed"].get<std::uint64_t>();
    const std::vector<bool> kept = plan.contains("done") ? plan["done"].get<std::vector<bool>>()
                                                         : std::vector<bool>(plan["points"].size(), false);
    if (std::all_of(kept.begin(), kept.end(), [](bool k) { return k; })) {  // a resumed file with nothing left
      if (world_.rank() == 0)
        fmt::print("gpuscale: nothing to resume: every point of {} is measured and valid\n", opts_.resume);
      return kExitOk;
    }
    // No point may need more memory than a rank has (the points still to measure).
    const DemandContext demand_ctx{opts_, backend_->name(), world_.size()};
    agree(world_, [&] {
      nlohmann::json todo = {{"points", nlohmann::json::array()}};
      for (std::size_t i = 0; i < kept.size(); ++i)
        if (!kept[i]) todo["points"].push_back(plan["points"][i]);
      check_plan_memory(todo, demand_ctx, backend_->device().info());
    });
    links_ = backend_->link_peaks(world_, opts_.backend_options);
    topo_ = make_topology(world_.hosts(), world_.local_ranks());
    const auto counts = gpu_counts(world_.size());

    // The watchdog and the sentinel (harness/guard/run_guard.h), then the file's first version.
    guard_ = std::make_unique<RunGuard>(world_, world_.rank() == 0 ? &keeper_ : nullptr);
    guard_->start();
    if (world_.rank() == 0 && !guard_->sentinel_problem().empty() && world_.size() > 1)
      fmt::print(stderr, "gpuscale: warning: lost ranks will not be detected: {}\n", guard_->sentinel_problem());
    agree(world_, [&] {
      if (world_.rank() != 0) return;
      doc_ = header(started, cluster, slurm, env, plan, counts, seed);
      for (const auto& s : identities) doc_["ranks"].push_back(nlohmann::json::parse(s));
      doc_["hosts"] = hosts_json();
      doc_["reliability"] = guard_->describe(opts_.watchdog_s);
      if (resume) adopt_resumed_rows(*resume);
      keeper_.open(path, replace);
      write();
    });

    // One group per GPU count; communicators are made when a collective first needs them.
    for (int k : counts) {
      const auto members = participants(topo_, k);
      const bool member = std::find(members.begin(), members.end(), world_.rank()) != members.end();
      const auto pos = std::find(topo_.packed_order.begin(), topo_.packed_order.end(), world_.rank());
      groups_.push_back(std::make_unique<Group>(world_, member, static_cast<int>(pos - topo_.packed_order.begin())));
      comms_.emplace_back();
    }

    const std::size_t total = static_cast<std::size_t>(std::count(kept.begin(), kept.end(), false)) * counts.size();
    Progress progress(total, world_.rank() == 0);
    std::size_t done = 0;
    int stop = 0;
    // Signals are announced while measuring only (not while a launcher ends a failed job).
    std::optional<StopAnnouncement> announce(std::in_place, world_.rank() == 0);
    try {
      for (std::size_t pi = 0; pi < plan["points"].size(); ++pi) {
        if (kept[pi]) continue;  // measured and valid in the resumed file
        const auto& point = plan["points"][pi];
        const Benchmark* b = registry().find(point["benchmark"].get<std::string>());
        const std::string label = fmt::format("{} {}", b->key(), params_label(point["params"], false));
        const double budget = watchdog_budget(b->demand(point["params"], demand_ctx), backend_->name(), opts_.watchdog_s);
        std::optional<double> single;
        for (std::size_t ki = 0; ki < counts.size(); ++ki) {
          const int k = counts[ki];
          guard_->begin_point({b->key(), point["params"], k, fmt::format("{} on {} GPU(s)", label, k), budget});
          auto row = measure(*b, point["params"], ki, k, seed, single);
          if (world_.rank() == 0) {
            // The 1-GPU reference of the point: its aggregate (one rank's value for independent work).
            if (k == 1 && row.status == RowStatus::ok) single = row.aggregate;
            progress.step(fmt::format("{} on {} GPU(s)", label, k));
            doc_["results"].push_back(row);
            doc_["results"].back()["attempt"] = attempt_;
            rows_.push_back(std::move(row));
          }
          ++done;
          // A signal on any rank stops every rank after this same row (harness/guard/stop_signal.h).
          stop = world_.max(stop_requested());
          if (stop != 0) break;
        }
        // The file after every point, under the watchdog of its last row (a hung file system is caught).
        if (world_.rank() == 0) {
          ActivityScope writing(Phase::computing, "writing the result file");
          write();
        }
        guard_->end_point();
        if (stop) break;
      }
    } catch (const CommunicatorAborted& e) {
      end_aborted(e);
    }
    announce.reset();
    int code = 0;
    const auto health = telemetry_->finish(world_, doc_["ranks"]);  // every rank: GPU verdicts to rank 0
    if (world_.rank() == 0) {
      if (stop && done < total) interrupted_ = stop_reason(stop);
      doc_["health"] = health;
      code = finish(Clock::now());
      fmt::print("{}", format_summary(rows_));
      fmt::print("{}", format_health(health, rows_));
      fmt::print("\nresults: {}\n", path_());
      if (!interrupted_.empty())
        fmt::print(stderr, "gpuscale: {} after {} of {} rows: partial results in {}\n", interrupted_, done, total, path_());
      std::fflush(stdout);
    }
    code = world_.max(code);  // every rank exits with the run's code
    guard_->finish();
    return code;
  }

 private:
  // This launch as --resume checks it: backend, host and device of every rank.
  LaunchShape launch_shape(const std::vector<std::string>& identities) const {
    LaunchShape l{backend_->name(), world_.hosts(), {}};
    for (const auto& s : identities) l.devices.push_back(nlohmann::json::parse(s)["device"]["name"].get<std::string>());
    return l;
  }

  // A resumed run's document: the kept rows as they were, the earlier attempts, this attempt's number.
  void adopt_resumed_rows(const ResumePlan& r) {
    attempt_ = r.attempt;
    doc_["attempts"] = r.attempts;
    doc_["results"] = r.kept_rows;
    for (const auto& row : r.kept_rows) rows_.push_back(row.get<ResultRow>());
    point_list_ = doc_["plan"]["point_list"];
  }

  // A transport aborted its communicator (a peer never arrived, or the transport failed): no rank can
  // measure with that group again, and a peer may be hung for good, so the job ends here. Rank 0 keeps
  // the rows measured so far (the file stays incomplete); one rank says what happened. The guard
  // stands down first, so the sentinel does not take the ranks that MPI_Abort ends for lost ranks.
  [[noreturn]] void end_aborted(const CommunicatorAborted& e) {
    guard_->stand_down();
    if (world_.rank() == 0 && !path_().empty()) write();
    if (!e.report()) std::this_thread::sleep_for(std::chrono::seconds(5));  // the reporting rank speaks first
    fmt::print(stderr, "gpuscale: {}\n", e.what());
    std::fflush(stderr);
    world_.abort(e.exit_code());
  }

  ResultRow measure(const Benchmark& b, const nlohmann::json& params, std::size_t ki, int k, std::uint64_t seed,
                    const std::optional<double>& single) {
    Group& group = *groups_[ki];
    RankMeasurement m;
    if (group.member()) {
      auto window = telemetry_->watch();  // NVML samples this rank's GPU while it measures
      try {
        Communicator* comm = nullptr;
        if (b.scope() == Scope::collective) {
          if (!comms_[ki]) {
            ActivityScope setup(Phase::collective, "creating the communicator");
            comms_[ki] = watch_communicator(backend_->make_communicator(group));
          }
          comm = comms_[ki].get();
        }
        RunContext ctx{backend_->device(), comm, group, opts_, seed, backend_.get()};
        ActivityScope working(Phase::computing, b.key());
        if (fault_injected("fail:" + b.key())) throw Error("injected failure (GPUSCALE_TEST_FAULT)");
        if (fault_injected(fmt::format("stall:{}@{}", b.key(), world_.rank()))) {
          ActivityScope stalled(Phase::computing, b.key() + " (injected stall, GPUSCALE_TEST_FAULT)");
          stall_for_test();
        }
        m = b.run(params, ctx);
      } catch (const CommunicatorAborted&) {
        throw;  // the group cannot measure again: end_aborted() ends the run
      } catch (const std::exception& e) {
        m = RankMeasurement{};
        m.failed = true;
        m.message = e.what();
      }
      telemetry_->attach(window, m.metrics);
    }
    const auto gathered = world_.gather_to_root(group.member() ? measurement_to_json(m).dump() : std::string());
    if (world_.rank() != 0) return {};
    RowInputs in;
    in.benchmark = b.key();
    in.scope = b.scope();
    in.unit = b.unit();
    in.params = params;
    in.gpu_count = k;
    in.nodes = nodes_spanned(topo_, k);
    in.topology = topology_label(topo_, k);
    in.single_rank_value = single;
    in.efficiency = b.efficiency();
    for (std::size_t r = 0; r < gathered.size(); ++r) {
      if (gathered[r].empty()) continue;
      const auto& id = doc_["ranks"][r];
      in.ranks.push_back({static_cast<int>(r), id["host"].get<std::string>(), id["device"]["index"].get<int>(),
                          measurement_from_json(nlohmann::json::parse(gathered[r]))});
    }
    const DeviceInfo& dev = backend_->device().info();
    in.peak = b.expected_peak(params, PeakContext{dev, backend_->peaks(), links_}, in.topology);
    auto row = build_row(in);
    health::flag_throttled(row);  // measurements taken while a GPU was throttled say so
    return row;
  }

  nlohmann::json header(Clock::time_point started, const ClusterName& cluster, const nlohmann::json& slurm,
                        const std::map<std::string, std::string>& env, const nlohmann::json& plan,
                        const std::vector<int>& counts, std::uint64_t seed) {
    nlohmann::json keys = nlohmann::json::array();
    for (const auto& p : plan["points"])
      if (keys.empty() || keys.back() != p["benchmark"]) keys.push_back(p["benchmark"]);
    auto peak_json = [](const ExpectedPeak& p) {
      return nlohmann::json{{"value", p.value ? nlohmann::json(*p.value) : nlohmann::json(nullptr)}, {"source", p.source}};
    };
    const char* fault = std::getenv(kFaultEnv);
    return {{"schema", kResultSchemaName},
            {"schema_version", kResultSchemaVersion},
            {"tool", {{"name", "gpuscale"}, {"version", GPUSCALE_VERSION}, {"commit", GPUSCALE_GIT_COMMIT}}},
            {"created_utc", utc_timestamp(started)},
            {"finished_utc", nullptr},
            {"cluster", {{"name", cluster.name}, {"source", cluster.source}}},
            {"backend", backend_->name()},
            {"command_line", opts_.command_line},
            {"environment", env},
            {"test_fault", fault ? nlohmann::json(fault) : nlohmann::json(nullptr)},
            {"slurm", slurm},
            {"mpi", {{"library", world_.library_version()}, {"world_size", world_.size()}}},
            {"software", backend_->software()},
            {"hosts", nlohmann::json::array()},
            {"ranks", nlohmann::json::array()},
            {"links", {{"intra_node", peak_json(links_.intra_node)}, {"inter_node", peak_json(links_.inter_node)}}},
            {"plan",
             {{"gpu_counts", counts},
              {"benchmarks", keys},
              {"points", plan["points"].size()},
              {"seed", seed},
              {"options", plan_options_json(opts_)},
              {"point_list", point_list(plan)}}},
            {"results", nlohmann::json::array()},
            {"summary", summary_json(false, 0)}};
  }

  nlohmann::json hosts_json() const {
    nlohmann::json hosts = nlohmann::json::array();
    for (int node = 0; node < topo_.nodes; ++node) {
      nlohmann::json h = {{"name", ""}, {"node_index", node}, {"cpu_model", ""}, {"ranks", nlohmann::json::array()}};
      for (std::size_t r = 0; r < topo_.node_of_rank.size(); ++r)
        if (topo_.node_of_rank[r] == node) {
          if (h["ranks"].empty()) {
            h["name"] = world_.hosts()[r];
            const auto& dev = doc_["ranks"][r]["device"];
            h["cpu_model"] = dev["backend"] == "cpu" ? dev["name"] : dev["details"].value("cpu_model", nlohmann::json(""));
          }
          h["ranks"].push_back(r);
        }
      hosts.push_back(h);
    }
    return hosts;
  }

  nlohmann::json summary_json(bool complete, int code) const {
    std::size_t counts[4] = {0, 0, 0, 0};
    for (const auto& r : rows_) ++counts[static_cast<int>(r.status)];
    return {{"complete", complete},
            {"valid", counts[1] == 0 && counts[2] == 0},
            {"rows", rows_.size()},
            {"ok", counts[0]},
            {"invalid", counts[1]},
            {"failed", counts[2]},
            {"skipped", counts[3]},
            {"exit_code", complete || !interrupted_.empty() ? nlohmann::json(code) : nlohmann::json(nullptr)},
            {"interrupted", interrupted_.empty() ? nlohmann::json(nullptr) : nlohmann::json(interrupted_)}};
  }

  // The run's end: complete, or cut short by a signal (complete false, exit code kExitInterrupted).
  int finish(Clock::time_point finished) {
    const bool complete = interrupted_.empty();
    const int code = !complete                                  ? kExitInterrupted
                     : summary_json(true, 0)["valid"].get<bool>() ? kExitOk
                                                                  : kExitInvalidResult;
    doc_["finished_utc"] = utc_timestamp(finished);
    doc_["analysis"] = analysis_section(doc_, rows_);  // stragglers (docs/results.md)
    write(complete, code);
    return code;
  }

  // The whole document, atomically: a reader (or a crash) sees the previous version or this one.
  void write(bool complete = false, int code = 0) {
    if (!point_list_.is_null()) order_rows_by_plan(doc_["results"], point_list_);  // resumed: kept and new rows
    doc_["summary"] = summary_json(complete, code);
    keeper_.write(doc_);
  }

  const std::string& path_() const { return keeper_.path(); }

  RunOptions opts_;  // as given, or with the recorded options of a resumed file
  World& world_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<health::RunTelemetry> telemetry_;
  LinkPeaks links_;
  Topology topo_;
  std::vector<std::unique_ptr<Group>> groups_;
  std::vector<std::unique_ptr<Communicator>> comms_;
  nlohmann::json doc_;
  std::vector<ResultRow> rows_;
  ResultKeeper keeper_;              // rank 0's result file
  std::unique_ptr<RunGuard> guard_;  // watchdog and sentinel
  int attempt_ = 0;                  // 0, or the attempt number of a resumed run
  nlohmann::json point_list_;        // a resumed run's plan order (rows are kept in it)
  std::string interrupted_;  // why the run stopped early ("interrupted by SIGUSR1"), or empty
};

}  // namespace

int run_plan(const RunOptions& opts, World& world) { return Run(opts, world).execute(); }

}  // namespace gpuscale
