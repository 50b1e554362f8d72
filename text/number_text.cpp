#include "text/number_text.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace gpuscale {

std::string figure_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const double a = std::fabs(v);
  if (a == 0) return "0";
  if (a < 1e-3 || a >= 999999.5) return fmt::format("{:.4g}", v);
  // Decimals for 4 significant digits; rounding may carry into one more integer digit (9.99996 ->
  // "10.000"), which the trailing-zero trim then drops.
  const int magnitude = static_cast<int>(std::floor(std::log10(a)));
  std::string s = fmt::format("{:.{}f}", v, std::max(0, 3 - magnitude));
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string format_duration(double seconds) {
  auto s = static_cast<long long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}


}  // namespace gpuscale
