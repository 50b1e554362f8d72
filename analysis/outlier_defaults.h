#pragma once
// The outlier rule's default threshold, apart from the rule (analysis/outliers.h), so that what only
// needs the number (RunOptions' --outlier default, harness/options/options.h) does not include the rule.
namespace gpuscale {

inline constexpr double kDefaultOutlierFraction = 0.10;  // 10% below the median

}  // namespace gpuscale
