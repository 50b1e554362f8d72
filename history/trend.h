#pragma once
// Series over time and their regressions, in memory (pure; tests/unit/history/test_trend.cpp).
// docs/history.md, "Regressions":
//   - a series is one row (cluster, benchmark, params, gpu_count) or one host's (or GPU's) values in it;
//   - the window is the points at or after --since (the latest point alone without it); the baseline
//     is the median of the last K points before the window, its noise band the wider of its points'
//     own bands and the spread of those K values around their median (run-to-run noise);
//   - the latest point is judged against the baseline by compare's noise rule (analysis/compare.h:
//     worse beyond the noise and the threshold), and the run where it changed is the first of the
//     window's points from which every point is so judged;
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
  NoiseBand band;
  std::size_t runs = 0;
};
// Median of the last k points before index `end`; nullopt when there is none.
std::optional<Baseline> baseline_before(const Series& s, std::size_t end, std::size_t k);

struct RegressionRules {
  std::string since;         // empty: the window is the latest point
  std::size_t baseline_runs = 5;
  double threshold = 0.1;
};

struct Regression {
  const Series* series = nullptr;
  Baseline baseline;
  const SeriesPoint* latest = nullptr;
  const SeriesPoint* changed = nullptr;  // the first point of the worse streak
  Change change;                          // latest against the baseline
  std::vector<std::string> change_points; // software changed at the step
};
std::vector<Regression> find_regressions(const std::vector<Series>& series, const RegressionRules& rules);

// The oldest run the rule needs: in each cluster, the K-th of its runs before its window (its runs at
// or after `since`, or its latest run), the oldest of these over the clusters ("" when a cluster has
// fewer runs: every run). `runs` in time order (HistoryStore::list_runs). The rank values are read from
// there on only, so `history regressions` and `report --history` hold (K + the window's runs) x ranks x
// rows values whatever the store's age. A series that skipped some of those K runs is judged against
// the values it has among them (docs/history.md).
std::string regression_horizon(const std::vector<RunSummary>& runs, const RegressionRules& rules);

// "key=value,key=value" against a row's canonical params text: every key present with that value
// (strings compared as text, numbers by their JSON text). Empty filter: true. Throws gpuscale::Error
// on a filter item without '='.
bool params_match(const std::string& params_json, const std::string& filter);
// "stream.triad dtype=fp64 elements=8388608 @ 4 GPUs" (and " host n3" for a host's series).
std::string series_label(const SeriesKey& k);

}  // namespace gpuscale::history
