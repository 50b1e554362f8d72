#include "harness/fleet_options.h"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale {

double parse_outlier_fraction(std::string_view text) {
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const bool number = !text.empty() && ec == std::errc() && ptr == text.data() + text.size();
  if (number && std::isfinite(v) && v > 0 && v < 1) return v;
  throw Error(fmt::format("invalid --outlier '{}': a fraction between 0 and 1, both excluded (0.10 = 10% below the median)",
                          text));
}

int parse_pairs_rounds(std::string_view text) {
  long long v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const bool number = !text.empty() && ptr == text.data() + text.size();
  if (number && ec == std::errc() && v >= 1 && v <= std::numeric_limits<int>::max()) return static_cast<int>(v);
  if (number && (ec == std::errc::result_out_of_range || v > std::numeric_limits<int>::max()) && text.front() != '-')
    throw Error(fmt::format("invalid --pairs-rounds '{}': at most {} rounds", text, std::numeric_limits<int>::max()));
  throw Error(fmt::format("invalid --pairs-rounds '{}': a whole number of rounds, at least 1", text));
}

}  // namespace gpuscale
