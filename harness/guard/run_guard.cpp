#include "harness/guard/run_guard.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "core/utc_time.h"
#include "harness/guard/stop_signal.h"
#include "world/activity.h"

namespace gpuscale {
namespace {

using nlohmann::json;

// Ranks other than 0 give rank 0 this long past the budget to end the run (it reports, seals the file
// and orders every rank to exit) before their own watchdog ends them. Their clock restarts at each
// step of their own and at each ask of rank 0's (which comes at least once per budget while it judges).
constexpr double kFallbackSeconds = 60;
// How long rank 0 waits for the ranks' answers, and for them to exit once told.
constexpr double kAskSeconds = 5, kExitWaitSeconds = 5;

long long steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One line on stderr without stdio: the main thread may hold stdio's lock, blocked where it stalled.
void say(const std::string& line) {
  const std::string text = line + "\n";
  const ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

}  // namespace

RunGuard::RunGuard(const World& world, ResultKeeper* keeper) : world_(world), keeper_(keeper) {}

RunGuard::~RunGuard() {
  finish();  // also when an agreed error ends the run: goodbye, so no rank takes it for a loss
  watchdog_.reset();  // joins its thread before the members it uses go
  sentinel_.reset();
}

void RunGuard::start() {
  SentinelHandlers h;
  h.rank_lost = [this](const PeerIdentity& lost, const std::string& how, bool interrupted) {
    // Off the sentinel's thread, which must keep reading while the others are told to exit.
    std::thread([this, lost, how, interrupted] { on_rank_lost(lost, how, interrupted); }).detach();
  };
  h.root_lost = [this](const std::string& how, bool interrupted) { on_root_lost(how, interrupted); };
  h.asked = [this] { last_ask_ns_.store(steady_ns(), std::memory_order_relaxed); };
  h.exit_ordered = [this](int code) {
    claim_ending();
    end_process(code);  // rank 0 has reported; it seals the file, this rank only goes
  };
  sentinel_ = Sentinel::start(world_, h);
  watchdog_ = std::make_unique<Watchdog>([this](const StalledPoint& p) { return on_look(p); });
}

const std::string& RunGuard::sentinel_problem() const {
  static const std::string none;
  return sentinel_ ? sentinel_->problem() : none;
}

json RunGuard::describe(std::optional<double> watchdog_override) const {
  const bool active = sentinel_ && sentinel_->active();
  json wd = !watchdog_override ? json("default: no step for the larger of 120 s and 10x the point's work at slow rates")
            : *watchdog_override > 0 ? json(*watchdog_override)
                                     : json("off");
  return {{"watchdog_s", wd},
          {"sentinel", {{"active", active}, {"problem", active ? json(nullptr) : json(sentinel_problem())}}}};
}

void RunGuard::begin_point(const StalledPoint& point) {
  note_progress();  // the point's start: every rank has a step within it before it is judged
  {
    std::lock_guard lock(mutex_);
    point_ = point;
  }
  if (watchdog_) watchdog_->arm(point, world_.rank() == 0 ? 0 : kFallbackSeconds);
}

void RunGuard::end_point() {
  if (watchdog_) watchdog_->disarm();
  std::lock_guard lock(mutex_);
  point_.reset();
}

void RunGuard::finish() {
  if (watchdog_) watchdog_->disarm();
  if (sentinel_) sentinel_->finish();
}

void RunGuard::stand_down() {
  claim_ending();
  if (watchdog_) watchdog_->disarm();
}

bool RunGuard::claim_ending() { return !ending_.exchange(true); }

std::string RunGuard::point_now() {
  std::lock_guard lock(mutex_);
  return point_ ? point_->label : std::string("between benchmark points");
}

// The process ends here, on the guard's thread, while the main thread may be blocked in a collective
// or a kernel: _exit, so nothing touches what that thread holds. The kernel closes the sockets and
// MPI's connections, the CUDA driver tears down the context (which stops its kernels); NCCL's own
// abort (ncclCommAbort) is for its -T timeout, on the thread that waits (collectives/nccl/nccl_comm.h).
void RunGuard::end_process(int code) { ::_exit(code); }

namespace {

// Seals rank 0's file with the ending; returns what the user's line adds about the file.
std::string seal_file(ResultKeeper* keeper, int code, const std::string& line, const char* key, const json& detail) {
  if (keeper == nullptr) return "";
  std::string error;
  const bool sealed = keeper->seal(
      [&](json& doc) {
        doc["finished_utc"] = utc_timestamp(std::chrono::system_clock::now());
        auto& s = doc["summary"];
        s["complete"] = false;
        s["exit_code"] = code;
        s["interrupted"] = line;
        s[key] = detail;
      },
      &error);
  if (sealed) return fmt::format("; partial results in {}", keeper->path());
  if (!error.empty())
    return fmt::format("; {} holds the points finished before (its summary could not be updated: {})", keeper->path(),
                       error);
  return keeper->path().empty() ? "" : "; no result file was written yet";
}

}  // namespace

double RunGuard::on_look(const StalledPoint& point) {
  const auto me = current_activity();
  if (world_.rank() != 0) {
    // This rank's own steps or rank 0's asks restart its clock: a rank waiting for a slow peer's group
    // is not stalled while rank 0 still judges the job. Past that, rank 0 cannot act: this rank goes alone.
    RankState self;
    self.answered = true;
    const long long asked = last_ask_ns_.load(std::memory_order_relaxed);
    self.idle_s = asked > 0 ? std::min(me.idle_s, static_cast<double>(steady_ns() - asked) * 1e-9) : me.idle_s;
    const auto verdict = judge_progress({self}, point.budget_s + kFallbackSeconds);
    if (!verdict.stalled) return verdict.look_again_s;
    if (!claim_ending()) return 0;
    say(fmt::format("gpuscale: watchdog: rank {} ({}): {} made no progress for {:.0f} s and rank 0 did not end the "
                    "run; this rank was {}{} ({} steps, its last {:.0f} s ago)",
                    world_.rank(), terminal_safe(world_.host()), terminal_safe(point.label), point.budget_s + kFallbackSeconds,
                    phase_name(me.phase), me.doing.empty() ? "" : ": " + terminal_safe(me.doing), me.progress, me.idle_s));
    end_process(kExitWatchdog);
  }
  SentinelHub* hub = sentinel_ && sentinel_->active() ? sentinel_->hub() : nullptr;
  std::vector<RankState> states;
  if (hub) {
    states = hub->ask_states(kAskSeconds);  // every rank's phase, steps and idle seconds (this one's too)
  } else {  // no sentinel: only this rank's own state is known, and its own progress judged
    for (int r = 0; r < world_.size(); ++r) {
      RankState s;
      s.rank = r;
      s.host = world_.hosts()[static_cast<std::size_t>(r)];
      if (r == 0) {
        s.pid = ::getpid();
        s.answered = true;
        s.phase = me.phase;
        s.doing = me.doing;
        s.progress = me.progress;
        s.idle_s = me.idle_s;
      }
      states.push_back(std::move(s));
    }
  }
  const auto verdict = judge_progress(states, point.budget_s);
  if (!verdict.stalled) return verdict.look_again_s;  // some rank still completes steps: slow, not stalled
  if (!claim_ending()) return 0;
  on_stall(point, std::move(states));
}

void RunGuard::on_stall(const StalledPoint& point, std::vector<RankState> states) {
  SentinelHub* hub = sentinel_ && sentinel_->active() ? sentinel_->hub() : nullptr;
  const auto report = describe_stall(point, states);
  const std::string file = seal_file(keeper_, kExitWatchdog, report.message, "stalled", report.json);
  say("gpuscale: " + report.message + file);
  if (hub) hub->order_exit(kExitWatchdog, kExitWaitSeconds);
  else if (world_.size() > 1) MPI_Abort(MPI_COMM_WORLD, kExitWatchdog);  // last resort: no other way to reach them
  end_process(kExitWatchdog);
}

void RunGuard::on_rank_lost(const PeerIdentity& lost, const std::string& how, bool interrupted) {
  if (!claim_ending()) return;
  const std::string during = point_now();
  if (interrupted) {
    // The rank said a second stop signal ended it (stop_signal.h's notice): the user's signals end
    // every rank at once, this one first; the run was interrupted as asked, not hurt. (A launcher's
    // SIGTERM after a crash is a first signal only: such a loss stays a loss.)
    const int sig = stop_requested();
    const std::string reason = sig != 0 ? stop_reason(sig) : std::string("interrupted by a second signal");
    const std::string line = fmt::format("{}; rank {} ({}) ended at its second signal during {}", reason, lost.rank,
                                         terminal_safe(lost.host), terminal_safe(during));
    const std::string file = seal_file(keeper_, kExitInterrupted, line, "lost_rank",
                                       {{"rank", lost.rank}, {"host", lost.host}, {"pid", lost.pid}, {"how", how},
                                        {"during", during}, {"after_signal", reason}});
    say("gpuscale: " + line + file);
    if (SentinelHub* hub = sentinel_ ? sentinel_->hub() : nullptr) hub->order_exit(kExitInterrupted, kExitWaitSeconds);
    end_process(kExitInterrupted);
  }
  const std::string line = fmt::format("{} during {}", lost_rank_message(lost, how), terminal_safe(during));
  const json detail = {{"rank", lost.rank}, {"host", lost.host}, {"pid", lost.pid}, {"how", how}, {"during", during},
                       {"detected_utc", utc_timestamp(std::chrono::system_clock::now())}};
  const std::string file = seal_file(keeper_, kExitRankLost, line, "lost_rank", detail);
  say("gpuscale: " + line + file);
  if (SentinelHub* hub = sentinel_ ? sentinel_->hub() : nullptr) hub->order_exit(kExitRankLost, kExitWaitSeconds);
  end_process(kExitRankLost);
}

void RunGuard::on_root_lost(const std::string& how, bool interrupted) {
  if (!claim_ending()) return;
  if (interrupted) end_process(kExitInterrupted);  // rank 0 (or the leader) took a second signal, as this rank will
  // This rank's hub is rank 0 for the leaders and rank 0's node, else its node's leader, whose loss
  // rank 0 reports (or which went because rank 0 did). One rank linked to rank 0 speaks for the
  // survivors; rank 0 appended every point it finished to the journal.
  const auto& leader = world_.tree().leader;
  auto hub_of = [&](int r) { return leader[static_cast<std::size_t>(r)] == r ? 0 : leader[static_cast<std::size_t>(r)]; };
  int speaker = -1;
  for (int r = 1; r < world_.size() && speaker < 0; ++r)
    if (hub_of(r) == 0) speaker = r;
  if (world_.rank() == speaker)
    say(fmt::format("gpuscale: {} during {}; every point finished before is in the result journal (gpuscale seal "
                    "FILE, or --resume FILE)",
                    lost_rank_message({0, world_.hosts()[0], 0}, how), terminal_safe(point_now())));
  end_process(kExitRankLost);
}

}  // namespace gpuscale
