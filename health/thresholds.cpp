#include "health/thresholds.h"

#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "results/result_io.h"
#include "health/clock_events.h"

namespace gpuscale {
extern const char* const kHealthThresholdsDefault;  // health/thresholds/default.json, embedded at build time
}

namespace gpuscale::health {
namespace {

using nlohmann::json;

// Reads one JSON object strictly: every key must be read, so an unknown (misspelt) key is an error.
class Strict {
 public:
  Strict(const json& j, std::string path, const std::string& origin) : j_(j), path_(std::move(path)), origin_(origin) {
    if (!j_.is_object()) fail(path_, "expected an object");
  }
  ~Strict() = default;

  const json& at(const std::string& key) {
    seen_.insert(key);
    if (!j_.contains(key)) fail(sub(key), "missing");
    return j_.at(key);
  }
  Strict object(const std::string& key) { return Strict(at(key), sub(key), origin_); }

  Severity severity(const std::string& key) { return parse_severity(at(key), sub(key)); }
  double number(const std::string& key, double min, double max) {
    const auto& v = at(key);
    if (!v.is_number() || v.get<double>() < min || v.get<double>() > max)
      fail(sub(key), fmt::format("expected a number from {} to {}", min, max));
    return v.get<double>();
  }
  std::string text(const std::string& key) {
    const auto& v = at(key);
    if (!v.is_string()) fail(sub(key), "expected a string");
    return v.get<std::string>();
  }
  LimitRule limit(const std::string& key) {
    auto o = object(key);
    LimitRule r{o.severity("severity"), o.number("above", 0, 1e18)};
    o.done();
    return r;
  }
  FractionRule fraction(const std::string& key) {
    auto o = object(key);
    FractionRule r{o.number("warn_below", 0, 10), o.number("fail_below", 0, 10)};
    o.done();
    if (r.fail_below > r.warn_below) fail(sub(key), "fail_below is above warn_below");
    return r;
  }
  Severity parse_severity(const json& v, const std::string& where) const {
    if (v == "fail") return Severity::fail;
    if (v == "warn") return Severity::warn;
    if (v == "ignore") return Severity::pass;
    fail(where, "expected \"fail\", \"warn\" or \"ignore\"");
  }

  void done() const {
    for (const auto& [k, v] : j_.items())
      if (!seen_.count(k)) fail(sub(k), "unknown key");
  }
  const json& raw() const { return j_; }
  std::string sub(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw Error(fmt::format("health thresholds {}: {}: {}", origin_, where, what));
  }

 private:
  const json& j_;
  std::string path_;
  const std::string& origin_;
  std::set<std::string> seen_;
};

Thresholds parse_merged(const json& doc, const std::string& origin) {
  Thresholds t;
  t.source = origin;
  Strict top(doc, "", origin);
  if (top.text("schema") != "gpuscale.health-thresholds") top.fail("schema", "expected \"gpuscale.health-thresholds\"");
  if (top.at("version") != 1) top.fail("version", "expected 1");
  top.text("description");

  {
    const auto& ce = top.at("clock_events");
    if (!ce.is_object()) top.fail("clock_events", "expected an object");
    for (const auto& [name, sev] : ce.items()) {
      if (!clock_event_bit(name)) top.fail("clock_events." + name, "unknown clock event reason");
      t.clock_events[name] = top.parse_severity(sev, "clock_events." + name);
    }
  }
  {
    auto o = top.object("ecc");
    t.ecc_uncorrected_increase = o.severity("uncorrected_increase");
    t.ecc_uncorrected_since_boot = o.limit("uncorrected_since_boot");
    t.ecc_corrected_increase = o.limit("corrected_increase");
    o.done();
  }
  {
    auto o = top.object("retired_pages");
    t.retired_pages_pending = o.severity("pending");
    t.retired_pages_total = o.limit("total");
    o.done();
  }
  {
    auto o = top.object("row_remap");
    t.remap_pending = o.severity("pending");
    t.remap_failed = o.severity("failed");
    o.done();
  }
  {
    auto o = top.object("xid");
    t.xid_other = o.severity("other");
    const auto& codes = o.at("codes");
    if (!codes.is_object()) o.fail("xid.codes", "expected an object");
    for (const auto& [code, rule] : codes.items()) {
      const auto where = "xid.codes." + code;
      std::uint64_t xid = 0;
      if (code.empty() || code.size() > 6 || code.find_first_not_of("0123456789") != std::string::npos)
        o.fail(where, "an Xid code is a decimal number");
      xid = std::stoull(code);
      Strict r(rule, where, origin);
      t.xid[xid] = {r.severity("severity"), r.text("meaning")};
      r.done();
    }
    o.done();
  }
  {
    auto o = top.object("pcie");
    t.pcie_width_below_max = o.severity("width_below_max");
    t.pcie_gen_below_max_under_load = o.severity("gen_below_max_under_load");
    t.pcie_replay_increase = o.limit("replay_increase");
    o.done();
  }
  {
    auto o = top.object("nvlink");
    t.nvlink_down = o.severity("link_down");
    t.nvlink_error_increase = o.limit("error_increase");
    o.done();
  }
  {
    auto o = top.object("clocks");
    t.load_percent = o.number("load_percent", 0, 100);
    auto low = o.object("under_load_below_fraction_of_max");
    t.clocks_low = low.severity("severity");
    t.clocks_low_fraction = low.number("fraction", 0, 1);
    low.done();
    o.done();
  }
  t.temperature = top.limit("temperature");
  t.gpu_lost = top.severity("gpu_lost");
  t.nvml_error = top.severity("nvml_error");
  {
    auto o = top.object("in_use");
    t.other_processes = o.severity("other_processes");
    t.exclusive_held = o.severity("exclusive_held");
    t.prohibited = o.severity("prohibited");
    o.done();
  }
  t.persistence_off = top.severity("persistence_mode_off");
  {
    auto o = top.object("software");
    t.driver_too_old = o.severity("driver_too_old");
    t.container_mismatch = o.severity("container_mismatch");
    o.done();
  }
  {
    auto o = top.object("performance");
    t.memory_bandwidth = o.fraction("memory_bandwidth");
    t.gemm = o.fraction("gemm");
    o.done();
  }
  t.consistency = top.severity("consistency");
  {
    auto o = top.object("dcgm");
    t.dcgm = {o.severity("fail"), o.severity("fail_monitor_only"), o.severity("warn"), o.severity("gpu_without_result"),
              o.severity("exit_without_failure")};
    o.done();
  }
  top.done();
  return t;
}

json builtin_json() { return json::parse(kHealthThresholdsDefault); }

}  // namespace

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::pass: return "PASS";
    case Severity::warn: return "WARN";
    case Severity::fail: return "FAIL";
  }
  return "?";
}

Severity Thresholds::clock_event(const std::string& name) const {
  auto it = clock_events.find(name);
  return it == clock_events.end() ? Severity::pass : it->second;
}

XidRule Thresholds::xid_rule(std::uint64_t code) const {
  auto it = xid.find(code);
  return it == xid.end() ? XidRule{xid_other, "Xid not in the thresholds table"} : it->second;
}

const std::string& builtin_thresholds_text() {
  static const std::string text = kHealthThresholdsDefault;
  return text;
}

const Thresholds& builtin_thresholds() {
  static const Thresholds t = parse_merged(builtin_json(), "built-in");
  return t;
}

Thresholds parse_thresholds(const std::string& text, const std::string& origin) {
  // The strict reader of every input file (results/result_io.h): nesting at most kMaxJsonDepth (so
  // merge_patch and dump() below cannot recurse without bound), no NaN, no duplicate key.
  const json user = parse_json_text(text, fmt::format("health thresholds {}", origin));
  if (!user.is_object()) throw Error(fmt::format("health thresholds {}: expected a JSON object", origin));
  json merged = builtin_json();
  merged.merge_patch(user);
  return parse_merged(merged, origin);
}

Thresholds load_thresholds(const std::string& path) {
  if (path.empty()) return builtin_thresholds();
  std::stringstream ss;
  try {
    auto in = open_input_file(path, kMaxThresholdsBytes);  // a regular file of at most 1 MiB: not /dev/zero
    ss << in.rdbuf();
  } catch (const Error& e) {
    throw Error(fmt::format("cannot read --health-thresholds file: {}", e.what()));
  }
  return parse_thresholds(ss.str(), path);
}

}  // namespace gpuscale::health
