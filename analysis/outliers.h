#pragma once
// Outliers (issue 14): the groups, nodes, node pairs and GPU pairs of a fleet run whose figure is far
// below the others, beyond what noise explains. Pure analysis of plain numbers; the harness and the
// report turn result rows into OutlierSample lists and PairMatrix tables.
//
// The rule (docs/fleet.md), for a population of samples with higher-is-better values (pass 1/time for
// times): with m the median value, MAD the median absolute deviation from m, and d the median of the
// samples' relative repetition spread below their value,
//   floor = m - max(fraction x m,  kMadScale x b(n) x mad_k x MAD,  d x m)
// and a sample is an outlier when even its best repetition, value x (1 + spread_up), is below the
// floor. So a sample must be more than `fraction` below the median AND outside the population's
// spread (MAD band: kMadScale makes MAD a standard-deviation estimate for normal noise, b(n) is the
// small-sample correction of Croux and Rousseeuw, mad_k = 3.5 the modified z-score cut of Iglewicz and
// Hoaglin) AND outside the typical repetition noise, on all of its repetitions. Noise alone does not
// make an outlier: never while every value stays within `fraction` of the median, and in seeded trials
// of 8..64 samples with 5% spread between samples and 30% between repetitions, never in 20000
// (tests/unit/analysis/test_outliers.cpp). A spread of 10% between samples (for a fraction of 10%) is
// another matter: a small population can then name one by chance (about 1 trial in 10000).
// Populations smaller than min_population name nothing (with two samples the median is their mean,
// and which one is sick cannot be told).
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/outlier_defaults.h"

namespace gpuscale {

inline constexpr double kMadScale = 1.4826;  // MAD x 1.4826 estimates the standard deviation of normal noise
inline constexpr double kDefaultMadK = 3.5;  // the band is 3.5 such deviations below the median

enum class OutlierKind { gpu, node, pair, group };
const char* outlier_kind_name(OutlierKind kind);  // "gpu" | "node" | "pair" | "group"

struct OutlierRule {
  double fraction = kDefaultOutlierFraction;  // --outlier
  double mad_k = kDefaultMadK;
  std::size_t min_population = 3;
};

// One measured thing: a group of a GPU count, a node, a node pair, a GPU pair.
struct OutlierSample {
  std::vector<std::string> hosts;
  std::vector<int> ranks;
  double value = 0;        // its figure (e.g. the median of its repetitions); not finite or <= 0: left out
  double spread_down = 0;  // (value - slowest repetition) / value, >= 0 (0 with one repetition)
  double spread_up = 0;    // (fastest repetition - value) / value, >= 0
};

struct Outlier {
  OutlierKind kind = OutlierKind::group;
  std::vector<std::string> hosts;
  std::vector<int> ranks;
  double value = 0, median = 0;
  double deficit = 0;  // 1 - value / median
  std::string reason;  // one line: why it was named
};

// The median, MAD and floor of a population (samples with finite values > 0); all 0 when there are
// fewer than rule.min_population of them.
struct OutlierFloor {
  std::size_t population = 0;
  double median = 0, mad = 0, typical_spread_down = 0, floor = 0;
};
OutlierFloor outlier_floor(const std::vector<OutlierSample>& samples, const OutlierRule& rule);

// The samples below the floor, as records of `kind`, in input order.
std::vector<Outlier> find_outliers(OutlierKind kind, const std::vector<OutlierSample>& samples, const OutlierRule& rule);

// A pair matrix over M members (nodes of a node-pair matrix, or the GPUs of one node).
struct PairMatrix {
  std::vector<std::string> hosts;          // host of each member
  std::vector<std::vector<int>> ranks;     // ranks of each member (may be empty: records then carry none)
  std::vector<std::vector<double>> values; // M x M; NaN (or any non-finite / <= 0) where not measured
  std::vector<std::vector<double>> spread_down, spread_up;  // same shape, or empty for 0
  bool directed = false;  // false: only the upper triangle (i < j) is read; true: every i != j is its own sample
  std::string member_name;  // what a member is in the reasons ("node's rail 1"); "" : the member kind's name
};

// Outliers of a pair matrix with attribution. The measured pairs form one population (the rule above);
// a member is suspect (a record of member_kind: node, or gpu for a GPU-pair matrix) when more than half
// of its measured pairs, and at least 2, are slow, or when the median of its pairs is an outlier (the
// same rule) among the members' medians; its record's value is the median of its pairs. A
// slow pair with no suspect member is a link suspect (a record of kind pair, both members' hosts and
// ranks); slow pairs of a suspect member are explained by it and not listed again. Members first (in
// member order), then pairs (row-major). Throws std::invalid_argument on a matrix of the wrong shape.
std::vector<Outlier> matrix_outliers(const PairMatrix& matrix, OutlierKind member_kind, const OutlierRule& rule);

// {kind, hosts, ranks, value, median, deficit, reason}: the entries of analysis.outliers.
nlohmann::json outlier_json(const Outlier& o);

}  // namespace gpuscale
