#include "harness/run/runner.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "analysis/row_text.h"
#include "analysis/run_analysis.h"
#include "analysis/run_text.h"
#include "text/text_table.h"
#include "backends/backend.h"
#include "core/term_text.h"
#include "harness/benchmarks/comm_timing.h"
#include "harness/guard/result_keeper.h"
#include "harness/guard/run_guard.h"
#include "harness/guard/stop_signal.h"
#include "harness/options/outlier_rule.h"
#include "harness/plan/memory_plan.h"
#include "harness/plan/plan.h"
#include "harness/plan/plan_limits.h"
#include "harness/plan/plan_point_check.h"
#include "harness/plan/plan_points.h"
#include "harness/registry.h"
#include "harness/run/progress.h"
#include "harness/run/resume.h"
#include "harness/run/row_measure.h"
#include "harness/run/run_cost.h"  // issue 15 (helper b)
#include "harness/run/run_metadata.h"
#include "harness/run/run_summary.h"
#include "health/run_telemetry.h"
#include "results/result_document.h"
#include "results/result_io.h"
#include "results/result_journal.h"
#include "results/result_stream.h"
#include "world/activity.h"
#include "world/agree.h"

namespace gpuscale {
namespace {

using Clock = std::chrono::system_clock;

// A run's identity: 64 random bits in hex.
std::string new_run_id() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

// No silent overwrite: an existing file is replaced only with --force, or continued with --resume.
void check_no_overwrite(const std::string& path, const RunOptions& opts) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) || opts.force) return;
  if (!opts.resume.empty() && std::filesystem::equivalent(path, opts.resume, ec)) return;
  throw Error(fmt::format("{} already exists: --force replaces it, --resume {} continues the run it holds", path, path));
}

// One run, phase by phase (execute() reads as the list). Rank 0 plans, writes and reports; every rank
// measures. Each phase that can fail before measuring does so on every rank alike (world/agree.h).
class Run {
 public:
  Run(const RunOptions& opts, World& world) : opts_(opts), world_(world) {}

  int execute() {
    read_resumed();
    open_output();
    open_backend();
    plan();
    if (nothing_left()) return kExitOk;
    preflight();
    start_document();
    measure();
    return finish();
  }

 private:
  // --resume FILE: rank 0 reads it, every rank takes the options it records (harness/run/resume.h).
  void read_resumed() {
    if (opts_.resume.empty()) return;
    std::string text;
    agree(world_, [&] {
      if (world_.rank() != 0) return;
      resumed_ = read_result_document(opts_.resume);
      // Rows finished after the file was last written (rank 0 died) are in its journal.
      if (auto journal = read_journal_file(journal_path_for(opts_.resume), kMaxJournalBytes)) {
        const auto note = adopt_journal(resumed_, *journal, opts_.resume);
        if (!note.empty()) fmt::print(stderr, "gpuscale: warning: {}\n", message_line(note));
      }
      auto header = resumed_;  // the other ranks need its options, not its rows
      header.erase("results");
      text = header.dump();
    });
    text = world_.broadcast_from_root(text);
    agree(world_, [&] {
      if (world_.rank() != 0) resumed_ = nlohmann::json::parse(text);
      opts_ = adopt_recorded_options(resumed_, opts_, opts_.resume);
    });
  }

  // Rank 0's result path: -o, the resumed file, or the default name; checked before anything is measured.
  void open_output() {
    path_ = opts_.output.empty() ? opts_.resume : opts_.output;
    replace_ = opts_.force;  // the first write may replace a file: --force, or resuming into it
    agree(world_, [&] {
      if (world_.rank() != 0) return;
      if (path_.empty()) {
        path_ = default_result_path(cluster_.name, started_, slurm_.is_null() ? "" : slurm_["job_id"].get<std::string>());
        std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
      }
      check_output_path(path_);
      check_no_overwrite(path_, opts_);
      std::error_code ec;
      replace_ = replace_ || (!opts_.resume.empty() && std::filesystem::equivalent(path_, opts_.resume, ec));
    });
  }

  // The backend and its telemetry on every rank; rank 0 gathers who measures where.
  void open_backend() {
    std::string why;
    agree(world_, [&] { backend_ = gpuscale::open_backend(opts_.backend, world_, opts_.backend_options, &why); });
    if (world_.rank() == 0)
      fmt::print(opts_.quiet ? summary_stream(opts_) : stderr, "gpuscale: {} backend ({})\n", backend_->name(), why);
    agree(world_, [&] { telemetry_ = health::RunTelemetry::open(opts_.telemetry, world_, backend_->device().info(), backend_->software()); });
    auto identity = rank_identity(world_.rank(), world_.host(), world_.local_rank(), backend_->device().info());
    identity["telemetry"] = telemetry_->identity();
    identities_ = world_.gather_to_root(identity.dump());
  }

  // Rank 0 plans (or takes the resumed file's plan); every rank receives the same points and seed.
  void plan() {
    agree(world_, [&] {
      if (world_.rank() != 0) return;
      if (resumed_.is_null()) {
        plan_ = make_plan(opts_, *backend_, world_);
        return;
      }
      resume_ = plan_resume(resumed_, launch_shape(identities_), opts_.resume, [](const std::string& k) { return registry().whole_job(k); });
      check_resumed_points(resume_->plan.at("points"), world_.size(), opts_.resume);  // the CLI's rules (plan_point_check.h)
      plan_ = resume_->plan;
      plan_["done"] = resume_->done;
    });
    plan_ = nlohmann::json::parse(world_.broadcast_from_root(world_.rank() == 0 ? plan_.dump() : ""));
    seed_ = plan_["seed"].get<std::uint64_t>();
    kept_ = plan_.contains("done") ? plan_["done"].get<std::vector<bool>>() : std::vector<bool>(plan_["points"].size(), false);
    counts_ = gpu_counts(world_.size());
  }

  // A resumed file with nothing left to measure.
  bool nothing_left() const {
    if (!std::all_of(kept_.begin(), kept_.end(), [](bool k) { return k; })) return false;
    if (world_.rank() == 0) fmt::print(summary_stream(opts_), "gpuscale: nothing to resume: every point of {} is measured and valid\n", opts_.resume);
    return true;
  }

  // The fleet benchmarks measure once, at the job's full size; every other benchmark at every count.
  bool measured_at(const Benchmark& b, int k) const { return !b.info().whole_job || k == world_.size(); }
  std::size_t rows_of_point(const Benchmark& b) const {
    return static_cast<std::size_t>(std::count_if(counts_.begin(), counts_.end(), [&](int k) { return measured_at(b, k); }));
  }

  DemandContext demand_context() const {
    const auto& hosts = world_.hosts();
    return {opts_, backend_->name(), world_.size(), static_cast<int>(std::set<std::string>(hosts.begin(), hosts.end()).size()),
            slowest_communicator_init_s()};
  }

  // Before measuring: every point still to measure fits in a rank's memory, the plan's estimate is within
  // --max-time (harness/plan/plan_limits.h); the watchdog and the sentinel start.
  void preflight() {
    const DemandContext demand_ctx = demand_context();
    agree(world_, [&] {
      nlohmann::json todo = {{"points", nlohmann::json::array()}};
      for (std::size_t i = 0; i < kept_.size(); ++i)
        if (!kept_[i]) todo["points"].push_back(plan_["points"][i]);
      std::vector<int> alive;  // the communicators alive during each point count against its memory
      for (std::size_t i = 0; const int n : count_communicators_alive(rows_on_communicators(plan_["points"], kept_, counts_, world_.size()), counts_.size()))
        if (!kept_[i++]) alive.push_back(n);
      check_plan_memory(todo, demand_ctx, backend_->device().info(), alive, backend_->communicator_memory());
      weights_ = plan_row_weights(plan_["points"], kept_, demand_ctx, [&](const Benchmark& b) { return rows_of_point(b); });
      (void)check_plan_size(weights_, opts_, memory_budget(backend_->device().info()).usable);
      if (const auto& info = backend_->device().info(); world_.rank() == 0 && !info.memory_unread.empty())
        fmt::print(stderr, "gpuscale: warning: {}: no memory check limits the plan's sizes\n", message_line(info.usable_memory_text()));
    });
    links_ = backend_->link_peaks(world_, opts_.backend_options);
    topo_ = make_topology(world_.hosts(), world_.local_ranks());
    guard_ = std::make_unique<RunGuard>(world_, world_.rank() == 0 ? &keeper_ : nullptr);
    guard_->start();
    if (world_.rank() == 0 && !guard_->sentinel_problem().empty() && world_.size() > 1)
      fmt::print(stderr, "gpuscale: warning: lost ranks will not be detected: {}\n", message_line(guard_->sentinel_problem()));
  }

  // The file's first version (rank 0): the header and a resumed run's kept rows; and this rank's group at every GPU count (harness/plan/tiling.h;
  // communicators are made when a collective first needs them).
  void start_document() {
    agree(world_, [&] {
      if (world_.rank() != 0) return;
      doc_ = result_header({started_, cluster_, slurm_, env_, backend_->name(), opts_.command_line,
                            world_.library_version(), world_.size(), backend_->software(), links_, plan_["points"],
                            counts_, seed_, plan_options_json(opts_), summary_json(rows_, false, 0, interrupted_)});
      for (const auto& s : identities_) doc_["ranks"].push_back(nlohmann::json::parse(s));
      doc_["hosts"] = hosts_json(topo_, world_.hosts(), doc_["ranks"]);
      doc_["reliability"] = guard_->describe(opts_.watchdog_s);
      // One run keeps its identity across attempts: the journal names it, and resume checks it.
      const auto& id = resumed_.is_object() ? resumed_.value("run_id", nlohmann::json()) : nlohmann::json();
      run_id_ = id.is_string() ? id.get<std::string>() : new_run_id();
      doc_["run_id"] = run_id_;
      std::vector<ResultKeeper::Line> kept;
      if (resume_) kept = adopt_resumed_rows(*resume_);
      doc_["summary"] = summary_json(rows_, false, 0, interrupted_);
      keeper_.open(path_, replace_, doc_, std::move(kept), run_id_, attempt_);
    });
    for (int k : counts_) count_groups_.push_back(make_count_groups(world_, k, opts_.tiling));
  }

  // Every point still to measure, at every GPU count, until the end or a stop signal.
  void measure() {
    total_ = weights_.size();
    Progress progress(std::move(weights_), world_.rank() == 0 && !opts_.quiet, opts_.max_time_s);  // says the estimate first
    // Signals are announced while measuring only (not while a launcher ends a failed job).
    StopAnnouncement announce(world_.rank() == 0);
    // Each GPU count's communicator goes after its last row that needs one (measure_point), not at the
    // end of the run: its buffers and, on NCCL, its device memory.
    last_comm_rows_ = last_communicator_rows(rows_on_communicators(plan_["points"], kept_, counts_, world_.size()), counts_.size());
    try {
      for (std::size_t pi = 0; pi < plan_["points"].size(); ++pi) {
        if (kept_[pi]) continue;  // measured and valid in the resumed file
        measure_point(pi, progress);
        if (stop_) break;
      }
    } catch (const CommunicatorAborted& e) {
      end_aborted(e);
    }
  }

  // One point at every GPU count; its rows go to the journal after it.
  void measure_point(std::size_t pi, Progress& progress) {
    const nlohmann::json& point = plan_["points"][pi];
    std::vector<ResultKeeper::Line> lines;
    const Benchmark* b = registry().find(point["benchmark"].get<std::string>());
    const std::string label = fmt::format("{} {}", b->key(), params_label(point["params"], false));
    const double budget = watchdog_budget(b->demand(point["params"], demand_context()), backend_->name(), opts_.watchdog_s);
    std::optional<double> single;
    for (std::size_t ki = 0; ki < counts_.size(); ++ki) {
      const int k = counts_[ki];
      if (!measured_at(*b, k)) continue;
      auto& count = count_groups_[ki];
      // "on 4 GPUs", or on the CPU backend "on 4 ranks" (its ranks are processes, not devices), as the tables say.
      const std::string what = fmt::format("{} on {}", label, device_word(backend_->name()).count(k));
      // The budget is the longest gap between steps (harness/guard/watchdog.h), not the row's total:
      // sequential tiling's turns each end in a step (World::turn_barrier), so it needs no more per turn.
      guard_->begin_point({b->key(), point["params"], k, what, budget});
      auto row = measure_row(*b, point["params"], count, seed_, single,
                             {world_, *backend_, *telemetry_, opts_, links_, doc_["ranks"]});
      // The count's communicator goes after its last row that needs one (the next count's is made next).
      if (ki < last_comm_rows_.size() && last_comm_rows_[ki] == pi) free_count_communicator(count);
      if (world_.rank() == 0) {
        // The 1-GPU reference of the point: its aggregate (one rank's value for independent work).
        if (k == 1 && row.status == RowStatus::ok) single = row.aggregate;
        progress.step(what);
        row.rank_stats = opts_.rank_stats;
        row.attempt = attempt_;
        lines.push_back({pi, k, result_row_line(row)});
        rows_.push_back(std::move(row));
      }
      ++done_;
    }
    // A signal on any rank stops every rank after this same whole point (harness/guard/stop_signal.h):
    // asked once per point, never between its GPU counts, so the file holds only whole points.
    stop_ = world_.max(stop_requested());
    // The point's rows to the journal, under the watchdog of its last row (a hung file system is caught).
    if (world_.rank() == 0) {
      ActivityScope writing(Phase::computing, "appending to the result journal");
      keeper_.append(std::move(lines), summary_json(rows_, false, 0, interrupted_));
    }
    guard_->end_point();
  }

  // The run's end: GPU verdicts, the last version of the file, the summary. Complete, or cut short by a
  // signal (complete false, exit code kExitInterrupted). Every rank exits with the run's code.
  int finish() {
    int code = 0;
    const auto health = telemetry_->finish(world_, doc_["ranks"]);  // every rank: GPU verdicts to rank 0
    if (world_.rank() == 0) {
      if (stop_ && done_ < total_) interrupted_ = stop_reason(stop_);
      doc_["health"] = health;
      const bool complete = interrupted_.empty();
      code = !complete ? kExitInterrupted : rows_valid(rows_) ? kExitOk : kExitInvalidResult;
      doc_["finished_utc"] = utc_timestamp(Clock::now());
      // Stragglers, the fleet's outliers and a burn-in's drift, whole (analysis/run_analysis.h).
      doc_["analysis"] = run_analysis(doc_, rows_, AnalysisRules{.outlier = outlier_rule_of(opts_)});
      const bool outliers = !doc_["analysis"]["outliers"].empty();
      if (complete && code == kExitOk && outliers && opts_.fail_on_outliers) code = kExitInvalidResult;
      doc_["summary"] = summary_json(rows_, complete, code, interrupted_);
      doc_["reliability"]["harness"] = run_cost().to_json();  // issue 15 (helper b): rank 0's own cost, harness/run/run_cost.h
      keeper_.finish(doc_);
      fmt::print(summary_stream(opts_), "{}", run_summary_text(doc_, rows_, keeper_.path(), terminal_columns()));  // analysis/run_text.h
      if (outliers && opts_.fail_on_outliers) fmt::print(stderr, "gpuscale: the run names outliers (--fail-on-outliers): exit 1\n");
      if (!interrupted_.empty())
        fmt::print(stderr, "gpuscale: {}\n", message_line(fmt::format("{} after {} of {} rows: partial results in {}",
                                                                       interrupted_, done_, total_, keeper_.path())));
      std::fflush(summary_stream(opts_));
    }
    code = world_.max(code);
    guard_->finish();
    return code;
  }

  // This launch as --resume checks it: backend, host and device of every rank.
  LaunchShape launch_shape(const std::vector<std::string>& identities) const {
    LaunchShape l{backend_->name(), world_.hosts(), {}};
    for (const auto& s : identities) l.devices.push_back(nlohmann::json::parse(s)["device"]["name"].get<std::string>());
    return l;
  }

  // A resumed run's document: the kept rows as they were, the earlier attempts, this attempt's number.
  std::vector<ResultKeeper::Line> adopt_resumed_rows(const ResumePlan& r) {
    attempt_ = r.attempt;
    doc_["attempts"] = r.attempts;
    std::vector<ResultKeeper::Line> kept;
    for (std::size_t i = 0; i < r.kept_rows.size(); ++i) {
      // Written as this version writes rows: a version-1 file's rows come out version 2 (their own
      // statistics per rank kept).
      rows_.push_back(r.kept_rows[i].get<ResultRow>());
      kept.push_back({r.kept_points[i], rows_.back().gpu_count, result_row_line(rows_.back())});
    }
    return kept;
  }

  // A transport aborted its communicator (a peer never arrived, or the transport failed): no rank can
  // measure with that group again, and a peer may be hung for good, so the job ends here. Rank 0 keeps
  // the rows measured so far (the file stays incomplete); one rank says what happened. The guard
  // stands down first, so the sentinel does not take the ranks that MPI_Abort ends for lost ranks.
  [[noreturn]] void end_aborted(const CommunicatorAborted& e) {
    guard_->stand_down();
    if (world_.rank() == 0 && !keeper_.path().empty()) {
      doc_["summary"] = summary_json(rows_, false, 0, interrupted_);
      keeper_.finish(doc_);
    }
    if (!e.report()) std::this_thread::sleep_for(std::chrono::seconds(5));  // the reporting rank speaks first
    fmt::print(stderr, "gpuscale: {}\n", message_line(e.what()));
    std::fflush(stderr);
    world_.abort(e.exit_code());
  }

  RunOptions opts_;  // as given, or with the recorded options of a resumed file
  World& world_;
  // Where and when (run_metadata.h).
  const Clock::time_point started_ = Clock::now();
  const std::map<std::string, std::string> env_ = allowed_environment(process_environment());
  const ClusterName cluster_ = cluster_name(opts_.cluster, env_, world_.hosts()[0]);
  const nlohmann::json slurm_ = slurm_info(env_);
  nlohmann::json resumed_;  // the --resume file, or null
  std::string path_;        // rank 0's result file
  bool replace_ = false;    // its first write may replace an existing file
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<health::RunTelemetry> telemetry_;
  std::vector<std::string> identities_;  // rank 0: every rank's identity (JSON text)
  // The plan: points, seed, which are kept from a resumed file, the GPU counts.
  nlohmann::json plan_;
  std::optional<ResumePlan> resume_;
  std::uint64_t seed_ = 0;
  std::vector<bool> kept_;
  std::vector<int> counts_;
  LinkPeaks links_;
  Topology topo_;
  std::vector<CountGroups> count_groups_;  // this rank's group at each GPU count
  std::vector<std::optional<std::size_t>> last_comm_rows_;  // per count: the point after which its communicator goes
  std::vector<double> weights_;            // every row to measure, weighed (harness/run/progress.h)
  // Measuring.
  std::size_t total_ = 0, done_ = 0;  // rows to measure, rows measured
  int stop_ = 0;                      // the stop signal every rank saw, or 0
  nlohmann::json doc_;
  std::vector<ResultRow> rows_;
  ResultKeeper keeper_;              // rank 0's result file
  std::unique_ptr<RunGuard> guard_;  // watchdog and sentinel
  int attempt_ = 0;                  // 0, or the attempt number of a resumed run
  std::string run_id_;               // the run's identity (kept across attempts)
  std::string interrupted_;  // why the run stopped early ("interrupted by SIGUSR1"), or empty
};

}  // namespace

int run_plan(const RunOptions& opts, World& world) { return Run(opts, world).execute(); }

}  // namespace gpuscale
