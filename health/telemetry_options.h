#pragma once
// The telemetry flags `gpuscale run` and `gpuscale health` share: --no-telemetry,
// --telemetry-interval, --nvml-library and --health-thresholds.
#include <chrono>
#include <string>

namespace CLI {
class App;
}

namespace gpuscale::health {

struct TelemetryOptions {
  bool enabled = true;
  std::chrono::microseconds interval{100000};  // sampling period during each benchmark point
  std::string nvml_library;                    // "" = $GPUSCALE_NVML_LIBRARY, else libnvidia-ml.so.1
  std::string thresholds_file;                 // "" = the built-in rules
};

struct TelemetryFlags {
  bool off = false;
  std::string interval, nvml_library, thresholds;
};

// Adds the flags to a subcommand; `with_switch` adds --no-telemetry (run only: health always samples).
void add_telemetry_flags(CLI::App* cmd, TelemetryFlags& flags, bool with_switch);
// Checks them; throws gpuscale::Error naming the flag (an unreadable thresholds file included).
TelemetryOptions resolve_telemetry_flags(const TelemetryFlags& flags);

// "100ms", "0.5s", "250us" or a bare number of milliseconds, from 1 ms to 60 s.
std::chrono::microseconds parse_interval(const std::string& text, const char* flag);

}  // namespace gpuscale::health
