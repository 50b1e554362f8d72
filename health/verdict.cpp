#include "health/verdict.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "health/clock_events.h"
#include "text/number_text.h"

namespace gpuscale::health {
namespace {

std::string why_missing(const GpuIdentity& g, const std::string& field) {
  if (auto it = g.unsupported.find(field); it != g.unsupported.end()) return "unsupported: " + it->second;
  if (auto it = g.errors.find(field); it != g.errors.end()) return "error: " + it->second;
  return "no reading";
}

void judge_clock_events(const Observation& o, const Thresholds& t, Verdict& v) {
  for (const auto& name : clock_event_names(o.clock_events()))
    v.add("clock_events", t.clock_event(name),
          fmt::format("{} clock event ({})", name, clock_event_meaning(name)));
}

void judge_memory(const GpuIdentity& g, const Observation& o, const Thresholds& t, Verdict& v) {
  const auto& a = o.first();
  const auto& b = o.last();
  if (!b) return;
  if (!b->ecc_uncorrected_volatile) {
    v.note(g.ecc_enabled == false ? "ECC not judged: ECC is disabled" : "ECC not judged: " + why_missing(g, "ecc_counts"));
  } else {
    const auto unc = counter_increase(a->ecc_uncorrected_volatile, b->ecc_uncorrected_volatile);
    if (unc && *unc > 0)
      v.add("ecc", t.ecc_uncorrected_increase,
            fmt::format("uncorrected ECC errors +{} (volatile count {} -> {})", *unc, *a->ecc_uncorrected_volatile,
                        *b->ecc_uncorrected_volatile));
    else if (static_cast<double>(*b->ecc_uncorrected_volatile) > t.ecc_uncorrected_since_boot.above)
      v.add("ecc", t.ecc_uncorrected_since_boot.severity,
            fmt::format("{} uncorrected ECC errors since the driver loaded", *b->ecc_uncorrected_volatile));
    const auto corr = counter_increase(a->ecc_corrected_volatile, b->ecc_corrected_volatile);
    if (corr && static_cast<double>(*corr) > t.ecc_corrected_increase.above)
      v.add("ecc", t.ecc_corrected_increase.severity, fmt::format("corrected ECC errors +{}", *corr));
  }
  if (b->retired_pages_pending) {
    if (*b->retired_pages_pending)
      v.add("retired_pages", t.retired_pages_pending, "page retirement pending (applied at the next driver load)");
    const unsigned total = b->retired_pages_sbe.value_or(0) + b->retired_pages_dbe.value_or(0);
    if (static_cast<double>(total) > t.retired_pages_total.above)
      v.add("retired_pages", t.retired_pages_total.severity, fmt::format("{} retired pages", total));
  }
  if (b->remap_pending) {
    if (*b->remap_pending)
      v.add("row_remap", t.remap_pending, "row remapping pending (the GPU needs a reset to apply it)");
    if (b->remap_failed.value_or(false))
      v.add("row_remap", t.remap_failed, "row remapping failed (the GPU needs service)");
  } else if (!b->retired_pages_pending) {
    v.note("row remapping and page retirement not judged: " + why_missing(g, "row_remap"));
  }
}

void judge_xid(const Observation& o, const Thresholds& t, Verdict& v) {
  std::map<std::uint64_t, int> counts;
  for (const auto& x : o.xids()) ++counts[x.xid];
  for (const auto& [code, n] : counts) {
    const auto rule = t.xid_rule(code);
    v.add("xid", rule.severity,
          fmt::format("Xid {} ({}){}", code, rule.meaning, n > 1 ? fmt::format(", {} times", n) : ""));
  }
}

void judge_links(const GpuIdentity& g, const Observation& o, const Thresholds& t, Verdict& v) {
  if (g.pcie_max_width && o.pcie_width_max() && *o.pcie_width_max() < *g.pcie_max_width)
    v.add("pcie", t.pcie_width_below_max,
          fmt::format("PCIe link x{}, below its maximum x{}", *o.pcie_width_max(), *g.pcie_max_width));
  if (g.pcie_max_gen) {
    if (o.pcie_gen_max_under_load()) {
      if (*o.pcie_gen_max_under_load() < *g.pcie_max_gen)
        v.add("pcie", t.pcie_gen_below_max_under_load,
              fmt::format("PCIe link Gen{} under load, below its maximum Gen{}", *o.pcie_gen_max_under_load(),
                          *g.pcie_max_gen));
    } else if (t.pcie_gen_below_max_under_load != Severity::pass) {
      v.note("PCIe generation not judged: no sample under load (the link slows down when idle)");
    }
  }
  const auto& a = o.first();
  const auto& b = o.last();
  if (a && b) {
    if (auto d = counter_increase(a->pcie_replays, b->pcie_replays); d && static_cast<double>(*d) > t.pcie_replay_increase.above)
      v.add("pcie", t.pcie_replay_increase.severity, fmt::format("PCIe replays +{}", *d));
    // A link that is down now, or went down, while others are up (all down: the GPU has no NVLink in use).
    std::vector<std::string> down;
    bool any_up = false;
    for (std::size_t l = 0; l < b->nvlink_up.size(); ++l) {
      const bool was_up = l < a->nvlink_up.size() && a->nvlink_up[l].value_or(false);
      const bool up = b->nvlink_up[l].value_or(false);
      any_up |= up || was_up;
      if (!up && b->nvlink_up[l].has_value()) down.push_back(std::to_string(l));
    }
    if (any_up && !down.empty())
      v.add("nvlink", t.nvlink_down,
            fmt::format("NVLink link{} {} down", down.size() > 1 ? "s" : "", fmt::join(down, ", ")));
    // Only counters read both times count: one NVML does not support is unknown, not zero.
    std::int64_t rise = 0;
    bool judged = false;
    for (std::size_t l = 0; l < b->nvlink_errors.size() && l < a->nvlink_errors.size(); ++l)
      for (std::size_t i = 0; i < kNvlinkCounterNames.size(); ++i)
        if (auto d = counter_increase(a->nvlink_errors[l][i], b->nvlink_errors[l][i])) {
          judged = true;
          rise += std::max<std::int64_t>(*d, 0);  // a counter reset is no error
        }
    if (rise > 0 && static_cast<double>(rise) > t.nvlink_error_increase.above)
      v.add("nvlink", t.nvlink_error_increase.severity, fmt::format("NVLink errors +{}", rise));
    if (any_up && !judged) v.note("NVLink errors not judged: NVML reads none of the links' error counters here");
  }
}

void judge_clocks(const GpuIdentity& g, const Observation& o, const Thresholds& t, Verdict& v) {
  if (t.clocks_low != Severity::pass && g.max_sm_clock_mhz && *g.max_sm_clock_mhz > 0) {
    if (auto median = o.sm_clock_median_under_load()) {
      const double frac = static_cast<double>(*median) / *g.max_sm_clock_mhz;
      if (frac < t.clocks_low_fraction)
        v.add("clocks", t.clocks_low,
              fmt::format("SM clock under load {} MHz, {:.0f}% of its maximum {} MHz", *median, frac * 100,
                          *g.max_sm_clock_mhz));
    } else {
      v.note(fmt::format("clocks under load not judged: no sample at {:.0f}% utilisation or more", t.load_percent));
    }
  }
  if (o.temperature_max() && static_cast<double>(*o.temperature_max()) > t.temperature.above)
    v.add("temperature", t.temperature.severity, fmt::format("temperature reached {} C", *o.temperature_max()));
}

void judge_use(const GpuJudgement& in, const Thresholds& t, Verdict& v) {
  const auto& g = in.identity;
  std::vector<std::string> others;
  const auto& c = in.observation.last();
  if (c && c->processes && in.pids_comparable) {
    for (const auto& p : *c->processes)
      if (std::find(in.own_pids.begin(), in.own_pids.end(), p.pid) == in.own_pids.end())
        others.push_back(fmt::format("pid {} ({:.1f} GiB)", p.pid, p.used_bytes / 1073741824.0));
  } else if (c && c->processes && !c->processes->empty()) {
    // NVML's PIDs are the host's and ours the namespace's: each of this job's processes is listed at
    // most once, so only a list longer than the job's is sure to hold another's.
    std::vector<std::string> listed;
    for (const auto& p : *c->processes) listed.push_back(fmt::format("{}", p.pid));
    const std::size_t extra = c->processes->size() > in.own_pids.size() ? c->processes->size() - in.own_pids.size() : 0;
    if (extra > 0)
      others.push_back(fmt::format("at least {} other process{} (NVML lists pids {} in the host's PID namespace, "
                                   "this job has {} process{} here)",
                                   extra, extra == 1 ? "" : "es", fmt::join(listed, ", "), in.own_pids.size(),
                                   in.own_pids.size() == 1 ? "" : "es"));
    else
      v.note(fmt::format("other processes: cannot tell (PID namespace): NVML lists pids {} in the host's PID "
                         "namespace, which this job's own cannot be compared with",
                         fmt::join(listed, ", ")));
  }
  const bool exclusive = g.compute_mode == "exclusive_process" || g.compute_mode == "exclusive_thread";
  if (exclusive && !others.empty())
    v.add("in_use", t.exclusive_held,
          fmt::format("exclusive compute mode held by another process: {}", fmt::join(others, ", ")));
  else if (!others.empty())
    v.add("in_use", t.other_processes, fmt::format("in use by other processes: {}", fmt::join(others, ", ")));
  if (g.compute_mode == "prohibited")
    v.add("in_use", t.prohibited, "compute mode is prohibited: no CUDA context can be created");
  if (g.persistence_mode == false)
    v.add("persistence_mode", t.persistence_off, "persistence mode is off (each job pays the driver's start-up)");
}

void judge_perf(const std::vector<PerfResult>& perf, const Thresholds& t, Verdict& v) {
  for (const auto& p : perf) {
    const FractionRule& rule = p.check == "gemm" ? t.gemm : t.memory_bandwidth;
    if (!p.ran) {
      v.note(fmt::format("{} not run: {}", p.check, p.error));
    } else if (!p.error.empty()) {
      v.add(p.check, Severity::fail, fmt::format("{} failed: {}", p.what, p.error));
    } else if (!p.valid) {
      v.add(p.check, Severity::fail, fmt::format("{} computed wrong results", p.what));
    } else if (!p.value) {
      v.add(p.check, Severity::fail, fmt::format("{} measured nothing", p.what));
    } else if (!p.peak || !(*p.peak > 0)) {
      v.note(fmt::format("{} {} {} not judged: {}", p.what, figure_text(*p.value), p.unit, p.peak_source));
    } else {
      const double frac = *p.value / *p.peak;
      const auto text = fmt::format("{} {} {}, {:.0f}% of the expected {}", p.what, figure_text(*p.value), p.unit,
                                    frac * 100, figure_text(*p.peak));
      if (frac < rule.fail_below)
        v.add(p.check, Severity::fail, text + fmt::format(" (fail below {:.0f}%)", rule.fail_below * 100));
      else if (frac < rule.warn_below)
        v.add(p.check, Severity::warn, text + fmt::format(" (warn below {:.0f}%)", rule.warn_below * 100));
    }
  }
}

}  // namespace

void Verdict::add(const std::string& check, Severity s, const std::string& message) {
  if (s == Severity::pass) return;
  findings.push_back({check, s, message});
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& x, const Finding& y) { return x.severity > y.severity; });
  severity = std::max(severity, s);
}

void Verdict::absorb(const Verdict& other) {
  for (const auto& f : other.findings) add(f.check, f.severity, f.message);
  notes.insert(notes.end(), other.notes.begin(), other.notes.end());
}

std::string Verdict::line() const {
  if (findings.empty()) return std::string(severity_name(severity));
  std::vector<std::string> parts;
  for (const auto& f : findings) parts.push_back(f.message);
  return fmt::format("{}: {}", severity_name(severity), fmt::join(parts, "; "));
}

Verdict judge_gpu(const GpuJudgement& in, const Thresholds& t) {
  Verdict v;
  const auto& g = in.identity;
  const auto& o = in.observation;
  if (o.gpu_lost() || g.errors.count("gpu"))
    v.add("gpu_lost", t.gpu_lost, "GPU lost (NVML_ERROR_GPU_IS_LOST): fallen off the bus or otherwise inaccessible");
  judge_clock_events(o, t, v);
  judge_memory(g, o, t, v);
  judge_xid(o, t, v);
  judge_links(g, o, t, v);
  judge_clocks(g, o, t, v);
  judge_use(in, t, v);
  judge_perf(in.perf, t, v);
  std::vector<std::string> errors;
  for (const auto& [field, why] : g.errors)
    if (field != "gpu") errors.push_back(fmt::format("{} ({})", field, why));
  if (!errors.empty()) v.add("nvml_error", t.nvml_error, fmt::format("NVML errors reading {}", fmt::join(errors, ", ")));
  if (g.mig_enabled.value_or(false))
    v.note(fmt::format("MIG is on with {} instance(s)", g.mig_instances.size()));
  return v;
}

SoftwareVersions software_versions(const SystemInfo& nvml, const nlohmann::json& sw) {
  SoftwareVersions v;
  v.driver = nvml.driver_version;
  v.driver_cuda = nvml.cuda_driver_version;
  auto text = [&](const char* key) -> std::optional<std::string> {
    if (!sw.is_object() || !sw.contains(key) || !sw[key].is_string()) return std::nullopt;
    return sw[key].get<std::string>();
  };
  if (auto d = text("driver")) v.libcuda_cuda = parse_cuda_version(*d);
  if (auto r = text("cuda_runtime")) v.runtime_cuda = parse_cuda_version(*r);
  v.nccl = text("nccl");
  return v;
}

std::string cuda_version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

std::optional<int> parse_cuda_version(const std::string& text) {
  int major = 0, minor = 0, used = 0;
  if (std::sscanf(text.c_str(), "%d.%d%n", &major, &minor, &used) != 2 || major < 1 || minor < 0 || minor > 99)
    return std::nullopt;
  const std::string rest = text.substr(static_cast<std::size_t>(used));
  if (!rest.empty() && (rest[0] != '.' || rest.find_first_not_of("0123456789", 1) != std::string::npos))
    return std::nullopt;
  return major * 1000 + minor * 10;
}

Verdict judge_software(const SoftwareVersions& s, const Thresholds& t) {
  Verdict v;
  const std::string driver = s.driver ? *s.driver : std::string("of unknown version");
  // The kernel driver's CUDA version bounds what any CUDA runtime can do on this node, unless the
  // container brings a newer user-space driver library (CUDA forward compatibility).
  const auto usable = s.libcuda_cuda ? s.libcuda_cuda : s.driver_cuda;
  if (s.runtime_cuda && usable && *s.runtime_cuda > *usable)
    v.add("software", t.driver_too_old,
          fmt::format("driver {} supports CUDA {}, older than the CUDA runtime {} gpuscale uses: update the driver "
                      "(or install the CUDA forward-compatibility package){}",
                      driver, cuda_version_text(*usable), cuda_version_text(*s.runtime_cuda),
                      s.nccl ? fmt::format("; NCCL {}", *s.nccl) : ""));
  if (s.libcuda_cuda && s.driver_cuda && *s.libcuda_cuda != *s.driver_cuda)
    v.add("software", t.container_mismatch,
          fmt::format("the CUDA driver library loaded (CUDA {}) differs from the host's kernel driver {} (CUDA {}): a "
                      "container or forward-compatibility libcuda{}{}",
                      cuda_version_text(*s.libcuda_cuda), driver, cuda_version_text(*s.driver_cuda),
                      s.runtime_cuda ? fmt::format("; CUDA runtime {}", cuda_version_text(*s.runtime_cuda)) : "",
                      s.nccl ? fmt::format("; NCCL {}", *s.nccl) : ""));
  if (!s.runtime_cuda) v.note("driver and CUDA runtime not compared: no CUDA runtime in this gpuscale");
  return v;
}

nlohmann::json to_json(const Verdict& v) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : v.findings)
    findings.push_back({{"check", f.check}, {"severity", severity_name(f.severity)}, {"message", f.message}});
  return {{"verdict", severity_name(v.severity)}, {"findings", findings}, {"notes", v.notes}};
}

nlohmann::json to_json(const PerfResult& p) {
  std::optional<double> frac;
  if (p.value && p.peak && *p.peak > 0) frac = *p.value / *p.peak;
  return {{"check", p.check},     {"what", p.what},          {"unit", p.unit},
          {"ran", p.ran},         {"valid", p.valid},        {"value", json_or_null(p.value)},
          {"expected_peak", json_or_null(p.peak)}, {"peak_source", p.peak_source}, {"fraction_of_peak", json_or_null(frac)},
          {"error", p.error}};
}

nlohmann::json to_json(const SoftwareVersions& v) {
  auto cuda = [](const std::optional<int>& x) { return x ? nlohmann::json(cuda_version_text(*x)) : nlohmann::json(nullptr); };
  return {{"driver", json_or_null(v.driver)},
          {"driver_cuda", cuda(v.driver_cuda)},
          {"libcuda_cuda", cuda(v.libcuda_cuda)},
          {"runtime_cuda", cuda(v.runtime_cuda)},
          {"nccl", json_or_null(v.nccl)}};
}

}  // namespace gpuscale::health
