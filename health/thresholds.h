#pragma once
// The rules that turn what NVML saw into a verdict, as data: health/thresholds/default.json is built
// into the binary (DCGM's failure classes as the default), and `--health-thresholds FILE` overrides
// the keys it names (a JSON merge patch over the defaults). Every key is checked: a typo is an error
// naming the key, never a rule silently ignored. docs/health.md describes the format.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace gpuscale::health {

enum class Severity { pass = 0, warn = 1, fail = 2 };  // "ignore" in a thresholds file means pass
std::string_view severity_name(Severity s);               // "PASS", "WARN", "FAIL"

// Fires when a value is above `above`.
struct LimitRule {
  Severity severity = Severity::pass;
  double above = 0;
};

// Measured / expected peak: fail below `fail_below`, warn below `warn_below`.
struct FractionRule {
  double warn_below = 0;
  double fail_below = 0;
};

struct XidRule {
  Severity severity = Severity::warn;
  std::string meaning;
};

// `gpuscale health --dcgm` (health/dcgm/dcgm_verdict.h): the severity of each of DCGM's outcomes.
struct DcgmRules {
  Severity fail = Severity::fail;               // a test result "Fail"
  Severity fail_monitor_only = Severity::warn;  // a "Fail" whose every error has DCGM severity 1 (MONITOR)
  Severity warn = Severity::warn;               // a test result "Warn" (dcgmi's text output's word)
  Severity gpu_without_result = Severity::warn; // a GPU of ours DCGM gave no result for
  Severity exit_without_failure = Severity::warn;  // dcgmi exited non-zero, yet no result failed
};

struct Thresholds {
  std::string source;  // "built-in" or the file it came from
  std::map<std::string, Severity> clock_events;  // by reason name (health/clock_events.h)
  Severity ecc_uncorrected_increase = Severity::fail;
  LimitRule ecc_uncorrected_since_boot, ecc_corrected_increase;
  Severity retired_pages_pending = Severity::warn;
  LimitRule retired_pages_total;
  Severity remap_pending = Severity::fail, remap_failed = Severity::fail;
  std::map<std::uint64_t, XidRule> xid;
  Severity xid_other = Severity::warn;
  Severity pcie_width_below_max = Severity::warn, pcie_gen_below_max_under_load = Severity::warn;
  LimitRule pcie_replay_increase;
  Severity nvlink_down = Severity::fail;
  LimitRule nvlink_error_increase;
  double load_percent = 90;          // a sample is "under load" at this GPU utilisation or more
  Severity clocks_low = Severity::warn;
  double clocks_low_fraction = 0.6;  // SM clock under load below this fraction of the maximum
  LimitRule temperature;             // degrees C
  Severity gpu_lost = Severity::fail, nvml_error = Severity::warn;
  Severity other_processes = Severity::warn, exclusive_held = Severity::fail, prohibited = Severity::fail;
  Severity persistence_off = Severity::warn;
  Severity driver_too_old = Severity::fail, container_mismatch = Severity::warn;
  FractionRule memory_bandwidth, gemm;
  Severity consistency = Severity::warn;
  DcgmRules dcgm;

  Severity clock_event(const std::string& name) const;  // pass for a reason the file does not name
  XidRule xid_rule(std::uint64_t xid) const;            // the code's rule, or xid_other
};

// The built-in rules.
const Thresholds& builtin_thresholds();
// The built-in rules with `text` (a JSON object) merged over them. Throws gpuscale::Error naming
// `origin` and the offending key.
Thresholds parse_thresholds(const std::string& text, const std::string& origin);
// parse_thresholds of a file (a regular file of at most kMaxThresholdsBytes); "" gives the built-in rules.
inline constexpr std::uintmax_t kMaxThresholdsBytes = 1ULL << 20;
Thresholds load_thresholds(const std::string& path);

const std::string& builtin_thresholds_text();

}  // namespace gpuscale::health
