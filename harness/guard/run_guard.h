#pragma once
// The run's guard against hangs and lost ranks (docs/reliability.md): the watchdog over every benchmark
// point, the sentinel that links every rank to rank 0 (through its node's leader), and the abnormal
// endings they lead to. Each ending reports once, leaves rank 0's result file sealed (every point
// finished before, and a summary saying what happened) and ends every rank with its exit code:
//   no rank progresses for the budget -> kExitWatchdog (5), naming the stalled rank and those waiting
//   a rank's process or node is lost -> kExitRankLost (6), naming the rank, host and pid
// The run loop tells the guard which point it measures; the rest happens on the guard's threads.
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/communicator.h"
#include "harness/guard/result_keeper.h"
#include "harness/guard/sentinel.h"
#include "harness/guard/watchdog.h"
#include "world/world.h"

namespace gpuscale {

class RunGuard {
 public:
  // `keeper`: rank 0's result file (nullptr elsewhere).
  RunGuard(const World& world, ResultKeeper* keeper);
  ~RunGuard();

  // Collective (every rank, main thread): connects the sentinel. Never fails the run: when the network
  // does not allow it, lost ranks go unnoticed by gpuscale (the launcher still ends the job) and
  // sentinel_problem() says why.
  void start();
  const std::string& sentinel_problem() const;
  // What the result file records: the sentinel's state and the watchdog's setting.
  nlohmann::json describe(std::optional<double> watchdog_override) const;

  // The point being measured (its budget, the longest gap between steps, in point.budget_s; <= 0: no
  // watchdog) and its end. Every rank calls both; beginning a point is a step of progress.
  void begin_point(const StalledPoint& point);
  void end_point();

  // After the run's last collective, every rank: goodbye to the sentinel, watchdog off.
  void finish();
  // Another ending has taken over (a transport aborted its communicator and MPI_Abort follows): the
  // watchdog is off and the ranks that end now are not reported as lost.
  void stand_down();

 private:
  bool claim_ending();
  double on_look(const StalledPoint& point);  // the watchdog's look (Watchdog): seconds to the next, 0: stalled
  [[noreturn]] void on_stall(const StalledPoint& point, std::vector<RankState> states);
  void on_rank_lost(const PeerIdentity& lost, const std::string& how, bool interrupted);
  void on_root_lost(const std::string& how, bool interrupted);
  [[noreturn]] void end_process(int code);
  std::string point_now();

  const World& world_;
  ResultKeeper* keeper_;
  std::unique_ptr<Sentinel> sentinel_;
  std::unique_ptr<Watchdog> watchdog_;
  std::atomic<bool> ending_{false};
  std::mutex mutex_;
  std::optional<StalledPoint> point_;
  // Ranks other than 0: when rank 0 last asked what this rank is doing (steady clock, ns; 0: never).
  // Rank 0 asks every budget while a point runs, so a recent ask means it is alive and judging.
  std::atomic<long long> last_ask_ns_{0};
};

}  // namespace gpuscale
