#pragma once
// gpuscale compare: rows of a baseline A and a candidate B matched on (benchmark, params, gpu_count).
// Each side's median has a confidence interval from its repetitions (noise.h); together they give the
// interval [lo, hi] of the goodness ratio g (B/A, or A/B for lower-is-better units). With the threshold
// t (docs/analysis.md, "The noise rule"):
//   regression:   hi < 1 - t       (worse beyond the noise and the threshold)
//   improvement:  lo > 1 + t
//   same:         1 - t <= lo and hi <= 1 + t
//   inconclusive: the interval crosses 1 - t or 1 + t, or a side has no noise estimate (< 2 repetitions)
// When the files come from different device models and both rows have a fraction of peak, the rule
// applies to the fraction of peak instead of the absolute value. A row invalid or failed in either file
// is a problem. Regressions and problems make the exit code 1; inconclusive rows never do.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "analysis/junit.h"
#include "analysis/noise.h"
#include "analysis/result_set.h"

namespace gpuscale {

enum class Verdict {
  same,            // the interval lies within the threshold
  improvement,     // B better beyond the noise and the threshold (informational)
  regression,      // B worse beyond the noise and the threshold
  inconclusive,    // the noise does not decide: the interval crosses the threshold
  problem,         // invalid or failed in A or B
  skipped,         // skipped in A or B: nothing to compare
  not_comparable,  // no value on one side (e.g. a collective at 1 GPU), changed unit, unit of unknown direction
};
std::string_view verdict_name(Verdict v);
// The noise rule above, on a change (noise.h) and a threshold in [0, 1).
Verdict verdict_of_change(const Change& c, double threshold);
// Regressions and improvements: what --only-changes shows (with the problems, which fail the comparison).
bool is_change(Verdict v);

struct ComparedRow {
  const ResultRow* a = nullptr;
  const ResultRow* b = nullptr;
  std::optional<double> ratio;           // B / A on the basis below
  std::optional<Change> change;          // the goodness ratio and its interval, when both sides have a value
  bool on_fraction_of_peak = false;      // basis: fraction of peak (different device models) or value
  NoiseBand noise_a, noise_b;
  Verdict verdict = Verdict::same;
  std::string note;                      // why a row is a problem / not comparable / inconclusive
};

struct Comparison {
  std::string file_a, file_b, cluster_a, cluster_b;
  std::vector<std::string> models_a, models_b;
  bool models_differ = false;
  double threshold = 0.05;
  std::vector<ComparedRow> rows;                    // matched rows, in A's order
  std::vector<const ResultRow*> only_a, only_b;     // rows one file lacks (listed, not fatal)
  std::size_t count(Verdict v) const;
  bool failed() const { return count(Verdict::regression) + count(Verdict::problem) > 0; }
};

Comparison compare_results(const LoadedResult& a, const LoadedResult& b, double threshold);

// How the terminal text is laid out (analysis/compare_text.cpp).
struct CompareView {
  std::size_t width = 80;     // no line longer than this (the CLI reads COLUMNS), unless wide
  bool wide = false;          // every column on one line per row, however long
  bool only_changes = false;  // rows with a regression, improvement or problem only (the summary counts all)
};
std::string format_comparison(const Comparison& c, const CompareView& view = {});
// "94 rows: 2 regression, 1 improvement, 40 same, 50 inconclusive, ..." (every verdict, zeros included).
std::string verdict_summary(const Comparison& c);
// One JUnit test suite per comparison, one test case per matched row.
JUnitSuite comparison_suite(const Comparison& c);

}  // namespace gpuscale
