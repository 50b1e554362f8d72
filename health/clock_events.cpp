#include "health/clock_events.h"

#include <fmt/format.h>

namespace gpuscale::health {

std::vector<std::string> clock_event_names(std::uint64_t bits) {
  std::vector<std::string> out;
  for (const auto& r : kClockEventReasons)
    if (bits & r.bit) {
      out.emplace_back(r.name);
      bits &= ~r.bit;
    }
  for (int b = 0; b < 64; ++b)
    if (bits & (1ULL << b)) out.push_back(fmt::format("0x{:x}", 1ULL << b));
  return out;
}

std::optional<std::uint64_t> clock_event_bit(std::string_view name) {
  for (const auto& r : kClockEventReasons)
    if (r.name == name) return r.bit;
  return std::nullopt;
}

std::string_view clock_event_meaning(std::string_view name) {
  for (const auto& r : kClockEventReasons)
    if (r.name == name) return r.meaning;
  return "unknown clock event reason";
}

}  // namespace gpuscale::health
