#include "core/units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"

namespace gpuscale {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

[[noreturn]] void bad(std::string_view what, std::string_view text, std::string_view why) {
  throw Error(fmt::format("invalid {} '{}': {}", what, text, why));
}

}  // namespace

std::uint64_t parse_size(std::string_view text, std::string_view what) {
  auto s = trim(text);
  if (s.empty()) bad(what, text, "empty");
  if (s.front() == '-') bad(what, text, "must be positive");
  std::uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec == std::errc::result_out_of_range) bad(what, text, "too large");
  if (ec != std::errc() || ptr == s.data()) bad(what, text, "expected a number with an optional K/M/G/T suffix");
  std::string_view suffix(ptr, static_cast<std::size_t>(s.data() + s.size() - ptr));
  int shift = 0;
  if (!suffix.empty()) {
    switch (std::toupper(static_cast<unsigned char>(suffix.front()))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      case 'B': shift = 0; break;
      default: bad(what, text, "unknown suffix (use K, M, G or T: binary, 1K = 1024)");
    }
    auto rest = suffix.substr(1);
    if (shift == 0 && !rest.empty()) bad(what, text, "unknown suffix (use K, M, G or T: binary, 1K = 1024)");
    if (!rest.empty() && rest != "B" && rest != "b" && rest != "iB" && rest != "ib")
      bad(what, text, "unknown suffix (use K, M, G or T: binary, 1K = 1024)");
  }
  if (value == 0) bad(what, text, "must be greater than zero");
  if (shift > 0 && value > (std::numeric_limits<std::uint64_t>::max() >> shift)) bad(what, text, "too large");
  return value << shift;
}

std::int64_t parse_positive(std::string_view text, std::string_view what) {
  auto s = trim(text);
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec == std::errc::result_out_of_range) bad(what, text, "too large");
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) bad(what, text, "expected a whole number");
  if (value <= 0) bad(what, text, "must be greater than zero");
  return value;
}

double parse_time_span(std::string_view text, std::string_view what) {
  std::string number(text);
  double unit = 1;
  if (!number.empty()) {
    switch (number.back()) {
      case 's': unit = 1; break;
      case 'm': unit = 60; break;
      case 'h': unit = 3600; break;
      case 'd': unit = 86400; break;
      default: unit = 0;
    }
    if (unit > 0) number.pop_back();
    else unit = 1;
  }
  const bool digits = !number.empty() && number.find_first_not_of("0123456789.") == std::string::npos;
  char* end = nullptr;
  const double v = digits ? std::strtod(number.c_str(), &end) * unit : 0;
  if (!digits || end != number.c_str() + number.size() || !std::isfinite(v) || v <= 0)
    throw Error(fmt::format("invalid {} '{}': expected a positive time such as 90, 90s, 20m, 1.5h or 2d", what,
                            terminal_quote(text)));
  return v;
}

std::optional<std::string> per_joule_unit(const std::string& rate_unit) {
  const std::string per_s = "/s";
  if (rate_unit.size() <= per_s.size() || rate_unit.compare(rate_unit.size() - per_s.size(), per_s.size(), per_s) != 0)
    return std::nullopt;
  return rate_unit.substr(0, rate_unit.size() - per_s.size()) + "/J";
}

std::string format_time_span(double seconds) {
  for (const auto& [unit, name] : {std::pair{86400.0, 'd'}, std::pair{3600.0, 'h'}, std::pair{60.0, 'm'}}) {
    const double n = seconds / unit;
    if (n >= 1 && std::abs(n * 10 - std::round(n * 10)) < 1e-9) return fmt::format("{:g}{}", std::round(n * 10) / 10, name);
  }
  return fmt::format("{:g}s", std::round(seconds * 10) / 10);
}

int parse_positive_int(std::string_view text, std::string_view what) {
  const auto v = parse_positive(text, what);
  if (v > std::numeric_limits<int>::max())
    bad(what, text, fmt::format("must be at most {}", std::numeric_limits<int>::max()));
  return static_cast<int>(v);
}

std::vector<std::string> split_list(std::string_view csv, std::string_view what) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= csv.size()) {
    auto end = csv.find(',', start);
    if (end == std::string_view::npos) end = csv.size();
    auto item = trim(csv.substr(start, end - start));
    if (item.empty()) throw Error(fmt::format("invalid {} '{}': empty item in the list", what, csv));
    out.emplace_back(item);
    start = end + 1;
  }
  return out;
}

std::vector<std::uint64_t> parse_size_list(std::string_view csv, std::string_view what) {
  std::vector<std::uint64_t> out;
  for (const auto& item : split_list(csv, what)) out.push_back(parse_size(item, what));
  return out;
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* kSuffix[] = {"", "K", "M", "G", "T"};
  int i = 0;
  while (i < 4 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++i;
  }
  return fmt::format("{}{}", bytes, kSuffix[i]);
}

std::vector<std::uint64_t> size_sweep(std::uint64_t min_bytes, std::uint64_t max_bytes, std::uint64_t factor,
                                      std::uint64_t step) {
  if (min_bytes == 0) throw Error("invalid size range: the minimum size must be greater than zero");
  if (max_bytes < min_bytes)
    throw Error(fmt::format("invalid size range: minimum {} is above maximum {}", format_size(min_bytes),
                            format_size(max_bytes)));
  if (factor <= 1 && step == 0) throw Error("invalid size sweep: the step factor must be at least 2 (or give a step)");
  // A sweep of more sizes than any plan can measure is refused before it is made (-b 8 -e 1G -i 1 would
  // be 10^9 sizes and gigabytes of plan); a factor of 2 or more makes at most 64.
  constexpr std::uint64_t kMaxSweepSizes = 100000;
  if (step > 0 && (max_bytes - min_bytes) / step >= kMaxSweepSizes)
    throw Error(fmt::format("the size sweep from {} to {} in steps of {} has {} sizes; the limit is {}: use a larger "
                            "-i/--stepbytes, or -f/--stepfactor",
                            format_size(min_bytes), format_size(max_bytes), format_size(step),
                            (max_bytes - min_bytes) / step + 1, kMaxSweepSizes));
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = min_bytes; s <= max_bytes;) {
    out.push_back(s);
    // Stop before the next size would pass max_bytes, so it can never wrap past 2^64.
    if (step > 0 ? s > max_bytes - step : s > max_bytes / factor) break;
    s = step > 0 ? s + step : s * factor;
  }
  return out;
}

std::string format_bytes(std::uint64_t bytes) {
  return fmt::format("{:.2f} GiB ({} bytes)", static_cast<double>(bytes) / (1ULL << 30), bytes);
}

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return std::numeric_limits<std::uint64_t>::max();
  return a * b;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return b > std::numeric_limits<std::uint64_t>::max() - a ? std::numeric_limits<std::uint64_t>::max() : a + b;
}

std::string human_duration(double s) {
  // figure_text (text/number_text.h) is a floor above core/; the unit is chosen so that the figure stays
  // below 10^4, where %.4g writes what figure_text does (only years past 9999 would differ).
  auto g = [](double v) { return fmt::format("{:.4g}", v); };
  if (s < 120) return g(s) + " s";
  if (s < 7200) return g(s / 60) + " min";
  if (s < 2 * 86400) return g(s / 3600) + " h";
  if (s < 2 * 365.25 * 86400) return g(s / 86400) + " days";
  return g(s / (365.25 * 86400)) + " years";
}

}  // namespace gpuscale
