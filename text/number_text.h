#pragma once
// One number format for every figure a person reads (tables, summaries, messages; not the nccl-tests
// table, which keeps nccl-tests' own): 4 significant digits in plain notation from 0.001 to below a
// million (38400, not 3.84e+04; 0.01872), trailing zeros dropped as %g does, and exponent notation only
// beyond that range, where plain digits would run long.
#include <string>

namespace gpuscale {

std::string figure_text(double v);  // "inf", "-inf" or "nan" for a non-finite value
// A duration as a clock shows it: "1:05" (minutes and seconds), "1:02:03" (hours too).
std::string format_duration(double seconds);

}  // namespace gpuscale
