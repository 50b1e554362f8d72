#pragma once
// Detection power (docs/fleet.md, "Detection power"): how often the run's own rules name a fault planted
// in a synthetic fleet (tools/detection_power/detection_fleet.h), and how often they name something that is not
// there. Per fault kind and size, the true-positive rate (the planted thing named by its own identity:
// host and GPU, rail, GPU pair) over seeded trials; per clean run, the things named with nothing
// planted; in planted runs, the wrong things named beside it. Pure: a configuration in, counts out;
// tools/detection_power/detection_report.h prints them, scripts/detection-power (main.cpp) runs it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/detection_power/detection_fleet.h"

namespace gpuscale::detection {

// The kinds detection power plants: every kind of the table of kinds it judges (core/fault_kinds.h,
// judged_by), in the table's order; their names joined by `sep`, for --faults' help and refusals.
std::vector<FaultKind> judged_kinds();
std::string judged_kind_names(std::string_view sep = ", ");
// The kinds of --faults' names; a name that is not one of judged_kinds throws gpuscale::Error (exit 2)
// naming it and them.
std::vector<FaultKind> judged_kinds_named(const std::vector<std::string>& names);

struct PowerConfig {
  FleetShape shape;
  NoiseModel noise = default_noise();
  OutlierRule outlier;                  // the fleet rule at the run's defaults (--false-alarm, --min-effect, --outlier)
  history::RegressionRules regression;  // the history rule: --threshold, --baseline-runs (its window is set per judge)
  int trials = 200;
  std::uint64_t seed = 1;
  std::vector<FaultKind> faults = judged_kinds();
  std::vector<double> sizes{0.05, 0.10, 0.20, 0.50};
  bool claims = true;  // also plant each fleet fault at the size the clean run's verdict claims it would name
};

// The members one clean run of the synthetic fleet judges (its GEMM and STREAM GPUs, its storage nodes,
// every rail matrix's and every node's GPU-pair matrix's pairs and members): the rule's correction, as
// a real run of those benchmarks makes it (analysis/fleet_outliers.h).
std::size_t fleet_judged(const FleetShape& shape);
// `config` with its rule's `judged` raised to fleet_judged: what the trials judge with.
PowerConfig fleet_config(PowerConfig config);

// What a trial holds at once, each refused beyond kMemoryLimit: the largest matrix (a rail matrix, one
// node pair a cell: its value and two spreads, as doubles, and the PairMatrix copy the rule reads), and
// the per-GPU state (the two 1-GPU rows and its share of the storage row, every GPU's every run as rank points and series points).
inline constexpr std::uint64_t kMemoryLimit = std::uint64_t{1} << 30;  // 1 GiB
inline constexpr int kMaxTrials = 1000000;
std::uint64_t largest_matrix_bytes(const FleetShape& shape);
std::uint64_t gpu_bytes(const FleetShape& shape, const NoiseModel& noise);
// Throws gpuscale::Error (exit 2) with one line naming the first problem.
void check_config(const PowerConfig& config);

// Trial i's seed: the run's seed and i mixed (splitmix64), so one printed seed replays any trial.
std::uint64_t trial_seed(std::uint64_t seed, std::uint64_t trial);

// The rule that judged: the fleet rule (analysis/fleet_outliers.h, matrix_outliers); the history rule
// (history/trend.h find_regressions) with its default window (the latest run against the baseline
// before it), or with --since at the step run (the window from the step on).
enum class Judge { fleet, history, history_since };
std::string_view judge_name(Judge judge);  // "fleet", "history", "history --since"
std::vector<Judge> judges_of(FaultKind kind);  // by the table's judged_by: the fleet rule, or both history windows

struct Judgement {
  std::string planted;             // the planted thing's identity (detection_fleet.h)
  std::vector<std::string> named;  // every identity the rule named in the measurement the fault is in
  std::optional<int> changed_run;  // history: the run where the planted series' regression starts (1-based)
};

struct CleanJudgement {
  std::string measurement;  // "gemm", "stream", "storage", "rails", "gpu pairs", "history", "history --since"
  std::vector<std::string> named;
};

// One trial: its fleet drawn once, judged clean and with each fault planted in turn (the same fleet,
// the same places: only the fault differs).
class Trial {
 public:
  Trial(const PowerConfig& config, std::uint64_t trial_seed);
  const std::vector<CleanJudgement>& clean() const { return clean_; }
  Judgement planted(const Fault& fault, Judge judge);
  // The power the clean run's verdict states for where `kind` sits: the smallest slowdown of that
  // population's member it names with 95% probability (analysis.power's `detectable`); nullopt for a
  // kind without one (flaky: not a steady slowdown; the history's kinds).
  std::optional<double> claimed(FaultKind kind) const;
  const Places& places() const { return places_; }

 private:
  // What the rule named; `power`, when given, receives the clean population's stated power (claimed()).
  std::vector<std::string> fleet_named(const GroupRows& rows, std::optional<double>* power = nullptr) const;
  std::vector<std::string> rail_named(int rail, std::optional<int> slow_node, double size, MatrixFloors* floors = nullptr) const;
  std::vector<std::string> pairs_named(int node, std::optional<std::pair<int, int>> link, double size,
                                       MatrixFloors* floors = nullptr) const;
  std::vector<std::string> history_named(Judge judge, const std::string& planted, std::optional<int>* changed) const;

  PowerConfig config_;  // the caller's, with the rule's correction for the whole fleet (fleet_judged)
  std::uint64_t seed_;
  Places places_;
  GroupRows gemm_, stream_, storage_;
  std::vector<std::vector<std::string>> rails_, pairs_;  // each rail's and each node's clean judgement
  std::vector<MatrixFloors> rail_floors_, pair_floors_;  // and their populations' floors, for claimed()
  std::optional<double> gemm_power_, stream_power_, storage_power_;
  std::vector<history::Series> series_;
  std::vector<CleanJudgement> clean_;
};

struct PowerRow {
  FaultKind fault = FaultKind::slow_gpu;
  double size = 0;  // a claim row: the mean of the sizes planted
  Judge judge = Judge::fleet;
  std::int64_t trials = 0, named = 0, wrong = 0;
  std::int64_t step_right = 0;  // history: named, and its regression starts at the step run
  // A claim row plants, in each trial, a fault of the size that trial's clean verdict claims to name
  // with 95% probability; trials whose claim is no useful bar (over 40%) are counted apart, not planted.
  bool claim = false;
  std::int64_t no_bar = 0;
  double claimed_max = 0;
};
struct CleanRow {
  std::string measurement;
  std::int64_t runs = 0, named = 0, runs_with_any = 0;
};
void tally(PowerRow& row, const Judgement& j, int step_run);
void tally(CleanRow& row, const std::vector<std::string>& named);

struct PowerTable {
  PowerConfig config;
  std::vector<PowerRow> rows;    // by fault, size, judge
  std::vector<CleanRow> clean;   // by measurement, then "fleet (all)": gemm, stream, storage, rails and gpu pairs together
};
PowerTable measure_power(const PowerConfig& config);

}  // namespace gpuscale::detection
