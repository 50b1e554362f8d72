#pragma once
// The fleet outlier rule a run's options make (--outlier, --min-effect, --false-alarm): one place, for
// the run's analysis and for the passes that confirm a suspect while the run measures.
#include "analysis/outliers.h"
#include "harness/options/options.h"

namespace gpuscale {

inline OutlierRule outlier_rule_of(const RunOptions& o) {
  OutlierRule rule;
  rule.fraction = o.outlier;
  rule.min_effect = o.min_effect;
  rule.false_alarm = o.false_alarm;
  return rule;
}

}  // namespace gpuscale
