#pragma once
// Series over time and their regressions, in memory (pure; tests/unit/history/test_trend.cpp).
// docs/history.md, "Regressions":
//   - a series is one row (cluster, benchmark, params, gpu_count) or one host's (or GPU's) values in it;
//   - the window is the points at or after --since (the latest point alone without it); the rule looks
//     at most N points back from the window's first (--lookback-runs, default 30);
//   - the series is cut into segments of one level each where its level steps (history/level_steps.h:
//     binary segmentation, a robust level-shift test beyond the noise and the threshold, either way);
//   - each segment that reaches into the window is judged against the segment before its step (the
//     last K points of it at most: --baseline-runs, default 30) by compare's noise rule (analysis/compare.h:
//     worse beyond the noise and the threshold), the run-to-run noise of the pair in the baseline's
//     band beside its points' own bands; a worse one is a regression that began at the step's first
//     run. So the baseline never holds a run of the regression, and a regression that still holds is
//     named on every run until it is more than N runs old;
//   - change points: software (driver, CUDA, NCCL, BLAS, ...) whose version differs between two
//     consecutive points, named beside the later one.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/noise.h"
#include "history/history_store.h"

namespace gpuscale::history {

struct SeriesKey {
  std::string cluster, benchmark, params;
  int gpu_count = 1;
  std::string host;  // empty: the row's own figure; else this host's (the median of its ranks' values)
  std::string gpu;   // a GPU's series (--gpu), else empty
  auto operator<=>(const SeriesKey&) const = default;
};

struct SeriesPoint {
  std::string run_id, created_utc;
  double value = 0;
  NoiseBand band;
  std::map<std::string, std::string> software;
  std::vector<std::string> changes;  // "driver 550.54 -> 555.42" against the previous point
};

struct Series {
  SeriesKey key;
  std::string unit;
  std::vector<SeriesPoint> points;  // in run time order
};

// The rows' series (points without a figure, or not ok, left out), changes filled.
std::vector<Series> row_series(const std::vector<RowPoint>& rows);
// Each host's series in each independent row (a collective's rank measures its whole group): the median of its valid ranks' values per run; by GPU when by_gpu.
std::vector<Series> rank_series(const std::vector<RankPoint>& ranks, bool by_gpu);

// "driver 550 -> 555" for each software whose version differs between a and b (a missing one is "-").
std::vector<std::string> software_changes(const std::map<std::string, std::string>& a,
                                          const std::map<std::string, std::string>& b);

struct Baseline {
  double median = 0;
  NoiseBand band;  // its points' own bands and the run-to-run noise (level_steps.h), never their min..max
  std::size_t runs = 0;
};
// The last k points (of value > 0) before index `end` as the baseline of one new point
// (reference_level in level_steps.h): their median and the band such a point lies in; nullopt when
// there is none.
std::optional<Baseline> baseline_before(const Series& s, std::size_t end, std::size_t k);

struct RegressionRules {
  std::string since;               // empty: the window is the latest point
  std::size_t baseline_runs = 30;  // K: the baseline is at most the last K points of the segment before the step
  double threshold = 0.1;
  std::size_t lookback_runs = 30;  // N: the points before the window in which steps are sought
};

struct Regression {
  const Series* series = nullptr;
  Baseline baseline;                       // the segment before the step (its last K points at most)
  const SeriesPoint* latest = nullptr;     // the worse segment's last point: the series' latest while it holds
  const SeriesPoint* changed = nullptr;    // the step: the worse segment's first point
  Change change;                           // the worse segment's level against the baseline
  std::vector<std::string> change_points;  // software changed at the step
  double level = 0;                        // the worse segment's level (its median) and its points
  std::size_t runs = 0;
  const SeriesPoint* recovered = nullptr;  // the point after it, when it ended within the window (--since)
};
std::vector<Regression> find_regressions(const std::vector<Series>& series, const RegressionRules& rules);

// The oldest run the rule needs: in each cluster, the N-th of its runs before its window (its runs at
// or after `since`, or its latest run; N = lookback_runs), the oldest of these over the clusters (""
// when a cluster has fewer runs: every run). `runs` in time order (HistoryStore::list_runs). The rank
// values are read from there on only, so `history regressions` and `report --history` hold (N + the
// window's runs) x ranks x rows values whatever the store's age. A series that skipped some of those N
// runs is judged on the values it has among them (docs/history.md).
std::string regression_horizon(const std::vector<RunSummary>& runs, const RegressionRules& rules);

// "key=value,key=value" against a row's canonical params text: every key present with that value
// (strings compared as text, numbers by their JSON text). Empty filter: true. Throws gpuscale::Error
// on a filter item without '='.
bool params_match(const std::string& params_json, const std::string& filter);
// "stream.triad dtype=fp64 elements=8388608 @ 4 GPUs" (and " host n3" for a host's series).
std::string series_label(const SeriesKey& k);

}  // namespace gpuscale::history
