#pragma once
// Outliers (issue 14): the groups, nodes, node pairs and GPU pairs of a fleet run whose figure is far
// below the others, beyond what noise explains. Pure analysis of plain numbers; the harness and the
// report turn result rows into OutlierSample lists and PairMatrix tables.
//
// The rule (docs/fleet.md, "Outliers"), for a population of n samples with higher-is-better values
// (pass 1/time for times). The noise is read from the run itself: with m the median value, MAD the
// median absolute deviation from m, or the median deviation of the values below m where that is wider
// (up to twice the MAD, and with at least 16 values below: the rule judges the slow side, and a
// population whose slow side is longer than its fast side, as a pair matrix's, is read by that side;
// for symmetric noise both are the same),
//   sigma = kMadScale x b(n) x MAD / m            the population's robust relative spread (MAD x 1.4826
//                                                 estimates a standard deviation; b(n) is the small-sample
//                                                 correction of Croux and Rousseeuw)
//   z     = t-quantile(df, 1 - false_alarm / J)   J the members judged in the whole run (Bonferroni), df
//                                                 the MAD's effective degrees of freedom, 0.37 (n - 1): a
//                                                 spread read from few members is itself uncertain
//   bar   = max(z x sigma, typical repetition spread below the value, min_effect, fraction)
//   floor = m (1 - bar)
// and a sample is named when even its best repetition, value x (1 + spread_up), is below the floor.
// So a clean run names anything with a chance of about false_alarm, however many members it judges;
// nothing under min_effect is named (not worth acting on). `fraction` (--outlier), when set, is the
// fixed rule instead: the bar is the widest of fraction, kFixedMadK x sigma (no correction for the
// members judged), the repetition spread and min_effect; its power is stated the same way. Populations smaller than min_population name nothing
// (with two samples the median is their mean, and which one is sick cannot be told).
//
// The power of the verdict: the smallest slowdown x that the rule names with 95% probability, given
// that run's own noise. A member x slower lands at m (1 - x) e^(sigma e), e standard normal, and is
// named while its best repetition, that times (1 + its spread up), is under the floor; its spread up
// is the typical one u give or take s_u (1.4826 x the MAD of the members' spreads up). With q the 95%
// point of one more member's draw when the spread is read from n members (Student's t at the MAD's
// degrees of freedom, times sqrt(1 + 1/n): a prediction interval; 1.645 for a large population),
//   x95 = 1 - (1 - bar) / ((1 + u) e^(q sqrt(sigma^2 + s_u^2))).
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/outlier_defaults.h"

namespace gpuscale {

inline constexpr double kMadScale = 1.4826;  // MAD x 1.4826 estimates the standard deviation of normal noise
// The fixed rule's cut (--outlier given): 3.5 robust deviations, the modified z-score cut of Iglewicz and
// Hoaglin, with no correction for the members judged.
inline constexpr double kFixedMadK = 3.5;
// The MAD's asymptotic efficiency for normal noise (Huber and Ronchetti, Robust Statistics, 2nd ed.,
// sec. 5.2): its spread estimate is as uncertain as a standard deviation from 0.37 n values.
inline constexpr double kMadEfficiency = 0.37;
// A bar wider than this is no bar: the run cannot tell a slow member from noise (the verdict says so
// and is never a clean PASS).
inline constexpr double kUsefulBar = 0.40;

enum class OutlierKind { gpu, node, pair, group };
const char* outlier_kind_name(OutlierKind kind);  // "gpu" | "node" | "pair" | "group"

struct OutlierRule {
  double fraction = kDefaultOutlierFraction;  // --outlier: a fixed floor below the median; 0: none
  double min_effect = kDefaultMinEffect;      // --min-effect
  double false_alarm = kDefaultFalseAlarm;    // --false-alarm: per clean run, over all members judged
  std::size_t judged = 0;                     // members judged in the whole run; 0 (or fewer): this population's
  std::size_t min_population = 3;
  // A relative spread the population's own is never read below: a matrix's members take their pairs'
  // (a member's median pair is as slow as it is, so the pairs' slow side is the members' spread; their
  // fast side is capped by their partners, which narrows the members' own MAD).
  double min_sigma = 0;
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

// The median, spread, floor and power of a population (samples with finite values > 0); all 0 when
// there are fewer than rule.min_population of them.
struct OutlierFloor {
  std::size_t population = 0;
  double median = 0, mad = 0;
  double sigma = 0;  // kMadScale x b(n) x MAD / median: the robust relative spread
  double z = 0;      // the cut, in sigmas, at the rule's false-alarm rate over the members judged
  double typical_spread_down = 0, typical_spread_up = 0;
  double spread_up_sigma = 0;  // kMadScale x the MAD of the members' spread_up: how far one's own may reach
  double bar = 0;         // 1 - floor / median: how far below the median the floor lies
  double floor = 0;
  double detectable = 0;  // the smallest slowdown named with 95% probability (1: none below 100%)
};
OutlierFloor outlier_floor(const std::vector<OutlierSample>& samples, const OutlierRule& rule);

// The rule's cut z, in robust deviations (above), for a population of `population`, in a run judging
// `judged` members at `false_alarm`; and the power formula x95 (above).
double outlier_cut(std::size_t population, std::size_t judged, double false_alarm);
double detectable_slowdown(std::size_t population, double bar, double sigma, double typical_spread_up,
                           double spread_up_sigma);

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
// ranks); slow pairs of a suspect member are explained by it and not listed again, and so are those of
// a member slow in 2 or more pairs that is not suspect (the slow end of the members' own spread: every
// pair of the slowest healthy member runs at its speed; a sick link is one slow pair of each member). Members first (in
// member order), then pairs (row-major). Throws std::invalid_argument on a matrix of the wrong shape.
// `floors`, when given, receives the two populations' floors: the measured pairs', and the members'
// medians' (what names a member).
struct MatrixFloors {
  OutlierFloor pairs, members;
};
std::vector<Outlier> matrix_outliers(const PairMatrix& matrix, OutlierKind member_kind, const OutlierRule& rule,
                                     MatrixFloors* floors = nullptr);
// The members a matrix judges: its measured pairs plus its members of at least 2 measured pairs.
std::size_t matrix_judged(const PairMatrix& matrix);

// {kind, hosts, ranks, value, median, deficit, reason}: the entries of analysis.outliers.
nlohmann::json outlier_json(const Outlier& o);

}  // namespace gpuscale
