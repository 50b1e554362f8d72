#include "health/telemetry_options.h"

#include <cmath>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/error.h"
#include "health/thresholds.h"

namespace gpuscale::health {

void add_telemetry_flags(CLI::App* cmd, TelemetryFlags& f, bool with_switch) {
  if (with_switch)
    cmd->add_flag("--no-telemetry", f.off, "do not sample the GPUs with NVML (no telemetry, no GPU verdicts)");
  cmd->add_option("--telemetry-interval", f.interval,
                  "GPU sampling period, e.g. 100ms, 10ms, 1s (default: run 100ms, health 20ms)");
  cmd->add_option("--nvml-library", f.nvml_library,
                  "NVML library to load (default $GPUSCALE_NVML_LIBRARY, else libnvidia-ml.so.1)");
  cmd->add_option("--health-thresholds", f.thresholds,
                  "JSON file overriding the built-in GPU verdict rules (see docs/health.md)");
}

std::chrono::microseconds parse_interval(const std::string& text, const char* flag) {
  double scale = 1000;  // a bare number is milliseconds
  std::string number = text;
  for (const auto& [suffix, us] : {std::pair<const char*, double>{"ms", 1000}, {"us", 1}, {"s", 1e6}}) {
    const std::string s(suffix);
    if (number.size() > s.size() && number.compare(number.size() - s.size(), s.size(), s) == 0) {
      number.resize(number.size() - s.size());
      scale = us;
      break;
    }
  }
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const double us = v * scale;
  if (used != number.size() || number.empty() || !std::isfinite(us) || us < 1000 || us > 60e6)
    throw Error(fmt::format("invalid {} '{}': expected a period from 1ms to 60s, e.g. 100ms", flag, text));
  return std::chrono::microseconds(static_cast<long long>(std::llround(us)));
}

TelemetryOptions resolve_telemetry_flags(const TelemetryFlags& f) {
  TelemetryOptions o;
  o.enabled = !f.off;
  if (!f.interval.empty()) o.interval = parse_interval(f.interval, "--telemetry-interval");
  o.nvml_library = f.nvml_library;
  o.thresholds_file = f.thresholds;
  if (!o.thresholds_file.empty()) load_thresholds(o.thresholds_file);  // a bad file stops the run before it starts
  return o;
}

}  // namespace gpuscale::health
