#pragma once
// The fleet options of gpuscale run (issue 14), checked before anything runs. Each parser takes the
// flag's text and returns the value, or throws gpuscale::Error (exit 2, kExitUsage) with one line
// naming the flag, the text and the rule. --tiling is parsed by parse_tiling_mode (harness/tiling.h).
#include <string_view>

#include "analysis/outliers.h"  // kDefaultOutlierFraction, the --outlier default

namespace gpuscale {

// --outlier: a fraction strictly between 0 and 1 ("0.1" = 10% below the median). "0", "1", "1.5",
// "-0.1", "nan", "inf", "", "10%" and trailing junk are refused.
double parse_outlier_fraction(std::string_view text);

// --pairs-rounds: a whole number of tournament rounds, at least 1 (at most INT_MAX). More rounds than
// the tournament has are allowed: they mean the full matrix (sampled_rounds caps them).
int parse_pairs_rounds(std::string_view text);

}  // namespace gpuscale
