#include "health/health_check.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "health/dcgm/program_run.h"
#include "health/device_match.h"
#include "health/pid_namespace.h"
#include "health/telemetry.h"

namespace gpuscale::health {
namespace {

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

std::string default_node_name(const std::string& host) {
  if (const char* n = std::getenv("SLURMD_NODENAME"); n && *n) return n;
  return host.substr(0, host.find('.'));
}

// The perf checks of every GPU the backend can open, each credited to the NVML GPU with its UUID.
void run_perf(const HealthOptions& opts, LocalGpus* backend, const std::string& why_no_gpus,
              std::vector<GpuReport>& gpus) {
  auto not_run = [](const std::string& why) {
    PerfResult bw{"memory_bandwidth", "stream.triad", "GB/s", {}, {}, "", false, true, why};
    PerfResult gemm{"gemm", "gemm", "TFLOP/s", {}, {}, "", false, true, why};
    return std::vector<PerfResult>{bw, gemm};
  };
  if (!opts.perf || !backend || backend->uuids().empty()) {
    for (auto& g : gpus) g.perf = not_run(opts.perf ? why_no_gpus : "--no-perf");
    return;
  }
  std::vector<GpuIdentity> ids;
  for (const auto& g : gpus) ids.push_back(g.identity);
  const auto uuids = backend->uuids();
  std::random_device rd;
  for (std::size_t ordinal = 0; ordinal < uuids.size(); ++ordinal) {
    const auto m = match_device(ids, {{"uuid", uuids[ordinal]}});
    if (m.gpu < 0) continue;  // NVML does not list it: nothing to credit the figures to
    auto& report = gpus[static_cast<std::size_t>(m.gpu)];
    report.cuda_ordinal = static_cast<int>(ordinal);
    try {
      auto device = backend->open(static_cast<int>(ordinal));
      report.perf = run_perf_checks(*device, backend->peaks(), opts.perf_options, rd() & ((1ULL << 53) - 1));
    } catch (const std::exception& e) {
      report.perf = not_run("");
      for (auto& p : report.perf) {
        p.ran = true;
        p.error = fmt::format("cannot open GPU {}: {}", ordinal, e.what());
      }
    }
  }
  for (auto& g : gpus)
    if (g.perf.empty()) g.perf = not_run("the GPU backend cannot see this GPU (CUDA_VISIBLE_DEVICES?)");
}

// GPUs of the node that differ from the others (model, power limit, clocks, ECC mode): a finding on
// each differing GPU.
std::vector<Inconsistency> judge_consistency(std::vector<GpuReport>& gpus, const Thresholds& t) {
  std::vector<UnitFacts> facts;
  for (const auto& g : gpus) {
    UnitFacts u;
    u.unit = g.identity.index;
    u.fields["device_model"] = g.identity.name;
    u.fields["power_limit_w"] = json_or_null(g.identity.power_limit_w);
    u.fields["max_sm_clock_mhz"] = json_or_null(g.identity.max_sm_clock_mhz);
    u.fields["max_memory_clock_mhz"] = json_or_null(g.identity.max_memory_clock_mhz);
    u.fields["ecc_enabled"] = json_or_null(g.identity.ecc_enabled);
    facts.push_back(std::move(u));
  }
  auto found = find_inconsistencies(facts);
  for (const auto& inc : found)
    for (const auto& d : inc.others)
      for (int unit : d.units)
        for (auto& g : gpus)
          if (g.identity.index == unit)
            g.verdict.add("consistency", t.consistency,
                          fmt::format("{} {} differs from the node's other GPUs ({} on {})", inc.field,
                                      d.value.is_string() ? d.value.get<std::string>() : d.value.dump(),
                                      inc.majority.is_string() ? inc.majority.get<std::string>() : inc.majority.dump(),
                                      inc.majority_count));
  return found;
}

// `dcgmi diag -r N -j` after the node's own checks (never beside them: both load the GPUs), its results
// into each GPU's verdict and the node's.
void run_dcgm(const HealthOptions& opts, const std::string& program, const Thresholds& t, HealthReport& r) {
  std::vector<GpuIdentity> ids;
  for (const auto& g : r.gpus) ids.push_back(g.identity);
  std::vector<std::string> argv{program};
  for (auto& a : dcgm_diag_args(opts.dcgm.level)) argv.push_back(std::move(a));
  r.dcgm = judge_dcgm_run(opts.dcgm, program, run_program(argv, opts.dcgm.timeout_s, kMaxDcgmOutputBytes), ids,
                          t.dcgm);
  if (r.dcgm->problem) return;
  for (std::size_t i = 0; i < r.gpus.size(); ++i) {
    r.gpus[i].verdict.absorb(r.dcgm->gpus[i].verdict);
    for (const auto& f : r.dcgm->node.findings) r.gpus[i].verdict.add(f.check, f.severity, f.message);
  }
  r.node.absorb(r.dcgm->node);
}

}  // namespace

HealthReport run_health_check(const HealthOptions& opts, LocalGpus* backend, const std::string& why_no_gpus) {
  const auto started = std::chrono::steady_clock::now();
  HealthReport r;
  r.host = hostname();
  r.node_name = opts.node_name.empty() ? default_node_name(r.host) : opts.node_name;
  const Thresholds t = load_thresholds(opts.telemetry.thresholds_file);
  r.thresholds = t.source;
  std::string dcgmi;
  if (opts.dcgm.level > 0) {
    const auto found = find_program(opts.dcgm.program);
    if (!found)
      throw Error(fmt::format("--dcgm r{}: {} not found{}: DCGM is not installed here (install DCGM 4.x, "
                              "datacenter-gpu-manager-4, or leave out --dcgm)",
                              opts.dcgm.level, opts.dcgm.program,
                              opts.dcgm.program.find('/') == std::string::npos ? " on PATH" : ""),
                  kHealthCannotCheck);
    dcgmi = *found;
  }

  auto lib = NvmlLibrary::open(opts.telemetry.nvml_library);
  r.nvml_library = lib->path();
  r.nvml_status = lib->available() ? "available" : "unavailable";
  r.nvml_reason = lib->why_unavailable();
  r.nvml_missing_symbols = lib->missing_symbols();
  auto node = enumerate_gpus(lib);
  r.system = node.system;
  r.software = software_versions(node.system, backend ? backend->software() : nlohmann::json(nullptr));

  if (node.gpus.empty()) {
    // NVML found the driver broken (not merely absent): that is a failed node, not one without GPUs.
    if (lib->init_result() == nvml::NVML_ERROR_LIB_RM_VERSION_MISMATCH) {
      r.node.add("software", t.driver_too_old,
                 "NVML library and kernel driver differ in version (a container or a half-done driver upgrade): " +
                     lib->why_unavailable());
      r.exit_code = kHealthFail;
    } else {
      r.exit_code = kHealthNoGpu;
      const bool backend_sees_gpus = backend && !backend->uuids().empty();
      r.no_gpu_reason = fmt::format("{}; {}", node.why_none,
                                    backend_sees_gpus ? "the GPU backend sees GPUs but NVML does not (driver problem?)"
                                                      : why_no_gpus);
      if (backend_sees_gpus) {
        r.node.add("nvml", t.nvml_error, "NVML unavailable while the GPU backend sees GPUs: " + node.why_none);
        if (r.node.severity != Severity::pass) r.exit_code = static_cast<int>(r.node.severity);
      }
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return r;
  }

  TelemetrySession session(lib, node.gpus, opts.telemetry.interval, t.load_percent);
  r.xid_events = session.xid_unsupported().empty() ? "watched" : "not watched: " + session.xid_unsupported();
  for (const auto& id : session.identities()) r.gpus.push_back({id, std::nullopt, {}, Observation(t.load_percent), {}, {}});
  session.begin();
  run_perf(opts, backend, why_no_gpus, r.gpus);
  const auto window = session.end();
  r.sampler_ticks = session.ticks();
  r.sampler_tick_us = session.seconds_per_tick() * 1e6;

  r.node.absorb(judge_software(r.software, t));
  const std::vector<unsigned> own{static_cast<unsigned>(getpid())};
  const bool comparable = this_pid_space() != PidSpace::separate;  // NVML's PIDs are the host's
  for (std::size_t i = 0; i < r.gpus.size(); ++i) {
    auto& g = r.gpus[i];
    g.observation = window[i];
    g.verdict = judge_gpu({g.identity, g.observation, own, g.perf, comparable}, t);
    g.summary = point_summary(g.observation, t);
    for (const auto& f : r.node.findings) g.verdict.add(f.check, f.severity, f.message);
  }
  r.consistency = judge_consistency(r.gpus, t);
  if (opts.dcgm.level > 0) run_dcgm(opts, dcgmi, t, r);
  Severity worst = r.node.severity;
  for (const auto& g : r.gpus) worst = std::max(worst, g.verdict.severity);
  r.exit_code = r.dcgm && r.dcgm->problem ? kHealthCannotCheck : static_cast<int>(worst);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return r;
}

std::vector<std::string> report_lines(const HealthReport& r) {
  std::vector<std::string> out;
  if (r.exit_code == kHealthNoGpu) {
    out.push_back(fmt::format("no GPU to check on {}: {}", r.host, r.no_gpu_reason));
    return out;
  }
  if (r.gpus.empty()) out.push_back(fmt::format("node {}: {}", r.host, r.node.line()));
  const bool dcgm_read = r.dcgm && !r.dcgm->problem;
  for (std::size_t i = 0; i < r.gpus.size(); ++i) {
    const auto& g = r.gpus[i];
    out.push_back(fmt::format("GPU {} {} {} {}: {}{}", g.identity.index, g.identity.pci_bus_id.value_or("-"),
                              g.identity.name, g.identity.uuid, g.verdict.line(),
                              dcgm_read ? dcgm_line_part(r.dcgm->level, r.dcgm->gpus[i]) : std::string()));
  }
  if (r.dcgm && r.dcgm->problem)
    out.push_back(fmt::format("DCGM r{} on {}: not read: {}", r.dcgm->level, r.host, *r.dcgm->problem));
  return out;
}

std::string drain_command(const HealthReport& r) {
  const bool gpu_failed = std::any_of(r.gpus.begin(), r.gpus.end(),
                                     [](const GpuReport& g) { return g.verdict.severity == Severity::fail; });
  if (!gpu_failed && !(r.gpus.empty() && r.exit_code == kHealthFail)) return "";
  std::string why;
  int failing = 0;
  for (const auto& g : r.gpus)
    if (g.verdict.severity == Severity::fail && ++failing == 1)
      why = fmt::format("GPU {} {}", g.identity.index, g.verdict.findings.front().message);
  if (r.gpus.empty() && !r.node.findings.empty()) why = r.node.findings.front().message;
  if (failing > 1) why += fmt::format(" (+{} more GPU{})", failing - 1, failing > 2 ? "s" : "");
  for (auto& ch : why)
    if (ch == '"' || ch == '\\' || ch == '\n' || ch == '\'' || ch == '$' || ch == '`') ch = ' ';
  if (why.size() > 180) why = why.substr(0, 177) + "...";
  return fmt::format("scontrol update nodename={} state=drain reason=\"gpuscale: {}\"", r.node_name, why);
}

nlohmann::json report_json(const HealthReport& r) {
  static const char* kVerdicts[] = {"PASS", "WARN", "FAIL", "NO_GPU", "NOT_CHECKED"};  // 5: NOT_CHECKED
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : r.gpus) {
    nlohmann::json j = to_json(g.verdict);
    nlohmann::json perf = nlohmann::json::array();
    for (const auto& p : g.perf) perf.push_back(to_json(p));
    nlohmann::json mig = nlohmann::json::array();
    for (const auto& m : g.identity.mig_instances) mig.push_back(mig_json(g.identity, m));
    j["index"] = g.identity.index;
    j["identity"] = to_json(g.identity);
    j["cuda_ordinal"] = g.cuda_ordinal ? nlohmann::json(*g.cuda_ordinal) : nlohmann::json(nullptr);
    j["perf"] = perf;
    j["mig"] = mig;
    j["summary"] = g.summary;
    j["counters"] = {{"start", g.observation.first() ? to_json(*g.observation.first()) : nlohmann::json(nullptr)},
                     {"end", g.observation.last() ? to_json(*g.observation.last()) : nlohmann::json(nullptr)}};
    j["line"] = g.verdict.line();
    const auto i = gpus.size();
    j["dcgm"] = r.dcgm && !r.dcgm->problem ? r.dcgm->gpus[i].tests : nlohmann::json(nullptr);
    gpus.push_back(std::move(j));
  }
  nlohmann::json consistency = nlohmann::json::array();
  for (const auto& inc : r.consistency) consistency.push_back(to_json(inc, "GPU"));
  const auto drain = drain_command(r);
  return {{"host", r.host},
          {"node_name", r.node_name},
          {"exit_code", r.exit_code},
          {"verdict", kVerdicts[std::clamp(r.exit_code, 0, 4)]},
          {"reason", r.no_gpu_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.no_gpu_reason)},
          {"seconds", r.seconds},
          {"sampler", {{"ticks", r.sampler_ticks}, {"mean_tick_us", r.sampler_tick_us}}},
          {"thresholds", r.thresholds},
          {"nvml",
           {{"library", r.nvml_library},
            {"status", r.nvml_status},
            {"reason", r.nvml_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.nvml_reason)},
            {"missing_symbols", r.nvml_missing_symbols},
            {"system", to_json(r.system)},
            {"xid_events", r.xid_events.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.xid_events)}}},
          {"software", to_json(r.software)},
          {"node", to_json(r.node)},
          {"gpus", gpus},
          {"consistency", consistency},
          {"dcgm", r.dcgm ? r.dcgm->summary : nlohmann::json(nullptr)},
          {"drain_command", drain.empty() ? nlohmann::json(nullptr) : nlohmann::json(drain)},
          {"lines", report_lines(r)}};
}

}  // namespace gpuscale::health
