#pragma once
// NVML's clock event reasons (formerly "clock throttle reasons"): why the GPU's clocks are below
// their maximum. Names are gpuscale's (and DCGM's) short forms; bits are NVML's
// nvmlClocksEventReason* values.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale::health {

struct ClockEventReason {
  std::uint64_t bit;
  std::string_view name;
  std::string_view meaning;
};

inline constexpr std::array<ClockEventReason, 11> kClockEventReasons{{
    {0x1, "GPU_IDLE", "nothing is running; clocks drop to idle"},
    {0x2, "APPLICATIONS_CLOCKS", "clocks held at the applications clocks setting"},
    {0x4, "SW_POWER_CAP", "clocks lowered to stay under the power limit"},
    {0x8, "HW_SLOWDOWN", "hardware slowdown (clocks cut by half or more): thermal, power brake or power supply"},
    {0x10, "SYNC_BOOST", "clocks held to the slowest GPU of a sync boost group"},
    {0x20, "SW_THERMAL", "software thermal slowdown: GPU or memory above its maximum operating temperature"},
    {0x40, "HW_THERMAL", "hardware thermal slowdown: the GPU is too hot"},
    {0x80, "HW_POWER_BRAKE", "hardware power brake: an external power brake signal (e.g. the power supply)"},
    {0x100, "DISPLAY_CLOCKS", "clocks limited by the display clock setting"},
    {0x200, "BOARD_LIMIT", "board limit"},
    {0x400, "RELIABILITY", "reliability limit"},
}};

// Names of the bits set in `bits`, in table order; unknown bits as "0x...".
std::vector<std::string> clock_event_names(std::uint64_t bits);
std::optional<std::uint64_t> clock_event_bit(std::string_view name);
std::string_view clock_event_meaning(std::string_view name);

}  // namespace gpuscale::health
