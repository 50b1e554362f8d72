#pragma once
// The watchdog: every benchmark point (at one GPU count, its gather and the file write after it) must
// keep making progress, or the run ends. It judges progress, not the point's total time: each rank
// counts its completed steps (world/activity.h), and a point stalls only when no rank of the job has
// completed one for the budget. A slow host or NIC still completes steps, so its point finishes and the
// outlier analysis names it; a hung rank does not. Then rank 0 asks every rank what it is doing (over
// the sentinel), names the rank stalled in its own work and the ranks waiting for it, seals the result
// file with every point finished before, and every rank exits with kExitWatchdog. docs/reliability.md
// describes it; the budget, the progress rule and the report are pure functions here, unit-tested; the
// thread that looks when the clock runs out is the Watchdog class.
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "world/activity.h"
#include "harness/benchmark.h"

namespace gpuscale {

// ---- budget ----------------------------------------------------------------------------------------

inline constexpr double kWatchdogFloorSeconds = 120;  // never less: start-up, communicators, a loaded node
inline constexpr double kWatchdogMultiple = 10;       // times the point's expected duration
// The soonest the watchdog looks again after seeing progress: a rank's step just short of the budget
// must not make it ask every rank in a tight loop.
inline constexpr double kWatchdogMinLookSeconds = 1;
// Past a transport's own timeout: its hang report (up to 10 s of listening) and the abort it makes.
inline constexpr double kWatchdogTransportGrace = 60;

// Rates a slow device of the backend still reaches (a tenth or less of a typical one), per rank.
struct WatchdogRates {
  double bytes_per_s;  // memory, copies and collectives
  double flops_per_s;  // GEMM
};
WatchdogRates watchdog_rates(const std::string& backend);

// The longest a point may go with no rank completing a step: `override_s` when given (0 = no watchdog),
// else the largest of the floor, kWatchdogMultiple x the point's whole work at the backend's slow rates
// (sized on the whole point, so no step of it, however coarse, can outlast it on a slow device) and,
// when the point's transport has its own timeout (NCCL's -T), that timeout plus
// kWatchdogTransportGrace: the transport acts first. There is no limit on the point's total time: a
// slow but progressing point runs to its end (the launcher's time limit, a signal, is the ceiling).
double watchdog_budget(const PointDemand& demand, const std::string& backend, std::optional<double> override_s);

// ---- report ----------------------------------------------------------------------------------------

// What one rank said it was doing when the point stalled.
struct RankState {
  int rank = 0;
  std::string host;
  long long pid = 0;
  bool answered = false;  // false: no answer (its process or node may be hung; or no sentinel)
  Phase phase = Phase::idle;
  std::string doing;
  std::uint64_t progress = 0;  // steps it completed (world/activity.h)
  double idle_s = 0;           // seconds since its last step
};

// ---- the progress rule -----------------------------------------------------------------------------

struct ProgressVerdict {
  bool stalled = false;
  double look_again_s = 0;  // when not stalled: the seconds until the budget runs out for the freshest rank
};
// A point has stalled when no rank that answered completed a step within `budget_s` (a rank that did
// not answer counts as making none). Otherwise look again when the most recent step turns budget_s
// old, and not sooner than kWatchdogMinLookSeconds.
ProgressVerdict judge_progress(const std::vector<RankState>& states, double budget_s);

struct StalledPoint {
  std::string benchmark;
  nlohmann::json params;
  int gpu_count = 0;
  std::string label;  // "all_reduce fp32 1M out-of-place sum on 4 GPUs" ("on 4 ranks" on the CPU backend)
  double budget_s = 0;  // the longest allowed gap between steps (watchdog_budget)
};

struct StallReport {
  std::string message;  // one line: what stalled, which rank, who waited
  nlohmann::json json;  // summary.stalled in the result file
};
// `states`: one per rank of the world, in rank order.
StallReport describe_stall(const StalledPoint& point, const std::vector<RankState>& states);

// ---- the thread ------------------------------------------------------------------------------------

class Watchdog {
 public:
  // `look` runs on the watchdog's thread each time an armed point's clock runs out. It judges the
  // point's progress and returns the seconds until the next look (> 0: still progressing), or 0 when
  // the point has stalled (it normally ends the process; if it returns 0, the watchdog stays disarmed
  // until the next arm()).
  explicit Watchdog(std::function<double(const StalledPoint&)> look);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Starts the clock for `point`, first look after point.budget_s + extra_s (point.budget_s <= 0: no
  // watchdog); replaces any armed point.
  void arm(StalledPoint point, double extra_s = 0);
  void disarm();

 private:
  void loop();

  std::function<double(const StalledPoint&)> look_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::optional<StalledPoint> armed_;
  unsigned long long generation_ = 0;  // bumped by arm and disarm: a look's answer is for its own arming
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;
};

}  // namespace gpuscale
