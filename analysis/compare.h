#pragma once
// gpuscale compare: rows of a baseline A and a candidate B matched on (benchmark, params, gpu_count).
// A row regresses when B is worse than A by more than the noise of both AND by more than the
// threshold (docs/analysis.md, "The noise rule"):
//   higher-is-better: B (1 + up_B) < A (1 - down_A)  and  B < A (1 - threshold)
//   lower-is-better:  B (1 - down_B) > A (1 + up_A)  and  B > A (1 + threshold)
// with down/up the rows' repetition spreads (noise.h). When the files come from different device
// models and both rows have a fraction of peak, the rule applies to the fraction of peak instead of
// the absolute value. A row invalid or failed in either file is a problem. Regressions and problems
// make the exit code 1.
#include <optional>
#include <string>
#include <vector>

#include "analysis/junit.h"
#include "analysis/noise.h"
#include "analysis/result_set.h"

namespace gpuscale {

enum class Verdict {
  same,            // within the noise or the threshold
  better,          // B better beyond the noise and the threshold (informational)
  regression,      // B worse beyond the noise and the threshold
  problem,         // invalid or failed in A or B
  skipped,         // skipped in A or B: nothing to compare
  not_comparable,  // no value on one side (e.g. busbw 0 at one GPU), changed unit, unit of unknown direction
};
std::string_view verdict_name(Verdict v);

struct ComparedRow {
  const ResultRow* a = nullptr;
  const ResultRow* b = nullptr;
  std::optional<double> ratio;           // B / A on the basis below
  bool on_fraction_of_peak = false;      // basis: fraction of peak (different device models) or value
  NoiseBand noise_a, noise_b;
  Verdict verdict = Verdict::same;
  std::string note;                      // why a row is a problem / not comparable
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

// The terminal text of one comparison.
std::string format_comparison(const Comparison& c);
// One JUnit test suite per comparison, one test case per matched row.
JUnitSuite comparison_suite(const Comparison& c);

}  // namespace gpuscale
