#pragma once
// The watchdog: every benchmark point (at one GPU count, its gather and the file write after it) must
// finish within a budget, or the run ends: rank 0 asks every rank what it is doing (world/activity.h,
// over the sentinel), names the rank stalled in its own work and the ranks waiting for it, seals the
// result file with every point finished before, aborts the communicators and every rank exits with
// kExitWatchdog. docs/reliability.md describes it; the budget and the report are pure functions here,
// unit-tested; the thread that waits for the deadline is the Watchdog class.
#include <chrono>
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
// Past a transport's own timeout: its hang report (up to 10 s of listening) and the abort it makes.
inline constexpr double kWatchdogTransportGrace = 60;

// Rates a slow device of the backend still reaches (a tenth or less of a typical one), per rank.
struct WatchdogRates {
  double bytes_per_s;  // memory, copies and collectives
  double flops_per_s;  // GEMM
};
WatchdogRates watchdog_rates(const std::string& backend);

// Seconds one point may take: `override_s` when given (0 = no watchdog), else the largest of the floor,
// kWatchdogMultiple x the point's work at the backend's slow rates and, when the point's transport has
// its own timeout (NCCL's -T), that timeout plus kWatchdogTransportGrace: the transport acts first.
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
};

struct StalledPoint {
  std::string benchmark;
  nlohmann::json params;
  int gpu_count = 0;
  std::string label;  // "all_reduce fp32 1M out-of-place sum on 4 GPUs" ("on 4 ranks" on the CPU backend)
  double budget_s = 0;
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
  // `expired` runs on the watchdog's thread when an armed point outlives its budget (it normally ends
  // the process; if it returns, the watchdog stays disarmed until the next arm()).
  explicit Watchdog(std::function<void(const StalledPoint&)> expired);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Starts the clock for `point` (point.budget_s <= 0: no deadline); replaces any armed point.
  void arm(StalledPoint point, double extra_s = 0);
  void disarm();

 private:
  void loop();

  std::function<void(const StalledPoint&)> expired_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::optional<StalledPoint> armed_;
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;
};

}  // namespace gpuscale
