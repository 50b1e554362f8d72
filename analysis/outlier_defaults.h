#pragma once
// The outlier rule's defaults, apart from the rule (analysis/outliers.h), so that what only needs the
// numbers (RunOptions' defaults, harness/options/options.h) does not include the rule.
namespace gpuscale {

// --outlier: a fixed floor below the median, for those who want one; 0: none (the noise decides).
inline constexpr double kDefaultOutlierFraction = 0;
// --min-effect: nothing smaller is named, however quiet the population: below it a slowdown is not
// worth draining a node for.
inline constexpr double kDefaultMinEffect = 0.03;
// --false-alarm: the chance that a clean run names anything, over every member it judges (fewer than
// 1 false name in 100 clean runs of the whole fleet).
inline constexpr double kDefaultFalseAlarm = 0.01;

}  // namespace gpuscale
