#include "health/run_telemetry.h"

#include <unistd.h>

#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/fault.h"
#include "health/consistency.h"
#include "health/device_match.h"
#include "health/pid_namespace.h"
#include "health/verdict.h"

namespace gpuscale::health {
namespace {

// One rank's facts for the consistency check, from its entry in the result file's "ranks".
UnitFacts rank_facts(const nlohmann::json& rank) {
  UnitFacts u;
  u.unit = rank.value("rank", 0);
  u.host = rank.value("host", std::string());
  const auto& t = rank.contains("telemetry") ? rank["telemetry"] : nlohmann::json::object();
  const auto sw = t.value("software", nlohmann::json::object());
  const auto gpu = t.value("gpu", nlohmann::json::object());
  auto get = [](const nlohmann::json& j, const char* key) { return j.value(key, nlohmann::json(nullptr)); };
  u.fields["driver_version"] = get(sw, "driver");
  u.fields["cuda_driver"] = get(sw, "driver_cuda");
  u.fields["cuda_runtime"] = get(sw, "runtime_cuda");
  u.fields["nccl"] = get(sw, "nccl");
  u.fields["device_model"] = gpu.contains("name") ? gpu["name"] : rank["device"].value("name", nlohmann::json(nullptr));
  for (const char* k : {"power_limit_w", "max_sm_clock_mhz", "max_memory_clock_mhz", "ecc_enabled"})
    u.fields[k] = get(gpu, k);
  return u;
}

}  // namespace

std::unique_ptr<RunTelemetry> RunTelemetry::open(const TelemetryOptions& opts, const World& world,
                                                 const DeviceInfo& device, const nlohmann::json& software) {
  std::unique_ptr<RunTelemetry> t(new RunTelemetry());
  t->opts_ = opts;
  t->thresholds_ = load_thresholds(opts.thresholds_file);
  t->pid_ = static_cast<unsigned>(getpid());
  t->software_ = software_versions(SystemInfo{}, software);
  const bool by_index = fault_injected(kTestTelemetryByIndex);
  if (!opts.enabled) {
    t->why_unavailable_ = "switched off (--no-telemetry)";
    return t;
  }
  if (device.backend == "cpu" && !by_index) {
    t->why_unavailable_ = "the CPU backend has no GPU";
    t->rapl_ = find_rapl();  // its energy: the node's packages, or none with the reason
    return t;
  }
  t->lib_ = NvmlLibrary::open(opts.nvml_library);
  auto node = enumerate_gpus(t->lib_);
  t->system_ = node.system;
  t->software_ = software_versions(node.system, software);
  if (node.gpus.empty()) {
    t->why_unavailable_ = node.why_none;
    return t;
  }
  std::vector<GpuIdentity> ids;
  for (const auto& g : node.gpus) ids.push_back(g.identity());
  DeviceMatch m;
  if (by_index) {
    m.gpu = world.local_rank() % static_cast<int>(ids.size());
    m.how = fmt::format("test: local rank {} -> NVML GPU {} ({})", world.local_rank(), m.gpu, kTestTelemetryByIndex);
  } else {
    m = match_device(ids, device.details);
  }
  if (m.gpu < 0) {
    t->why_unavailable_ = m.why_none;
    return t;
  }
  const auto& gpu = ids[static_cast<std::size_t>(m.gpu)];
  t->match_ = m.how;
  if (m.mig >= 0) t->mig_ = mig_json(gpu, gpu.mig_instances[static_cast<std::size_t>(m.mig)]);
  // A MIG device's clocks, power and errors are its GPU's: the session watches the GPU.
  t->session_ = std::make_unique<TelemetrySession>(t->lib_, std::vector<NvmlGpu>{node.gpus[static_cast<std::size_t>(m.gpu)]},
                                                   opts.interval, t->thresholds_.load_percent,
                                                   std::vector<GpuIdentity>{gpu});
  return t;
}

RunTelemetry::~RunTelemetry() = default;

nlohmann::json RunTelemetry::identity() const {
  if (!session_)
    return {{"status", "unavailable"}, {"reason", why_unavailable_}, {"software", to_json(software_)}, {"pid", pid_}};
  return {{"status", "available"},
          {"source", fmt::format("NVML ({})", lib_->path())},
          {"matched_by", match_},
          {"interval_ms", static_cast<double>(opts_.interval.count()) / 1000.0},
          {"system", to_json(system_)},
          {"gpu", to_json(session_->identities().front())},
          {"mig", mig_},
          {"xid_events", session_->xid_unsupported().empty() ? "watched" : "not watched: " + session_->xid_unsupported()},
          {"software", to_json(software_)},
          {"pid", pid_}};
}

double RunTelemetry::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

RunTelemetry::Window::Window(const RunTelemetry* owner, TelemetrySession* s, std::optional<RaplReading> rapl)
    : owner_(owner), session_(s), rapl_(std::move(rapl)) {
  if (session_) session_->begin();
  listening_ = session_ != nullptr || rapl_.has_value();
  if (listening_) previous_ = set_timed_span_listener(this);
}

RunTelemetry::Window::~Window() {
  if (listening_) set_timed_span_listener(previous_);
  if (session_) session_->end();
}

void RunTelemetry::Window::span_opened() {
  span_t_ = owner_->seconds();
  span_why_.clear();
  if (session_) span_mj_ = session_->gpus().front().energy_mj(&span_why_);
  if (rapl_) span_rapl_ = read_rapl(*owner_->rapl_, span_t_);
}

void RunTelemetry::Window::span_closed() {
  const double t = owner_->seconds();
  ++span_count_;
  if (session_) {
    std::string why;
    const auto mj = session_->gpus().front().energy_mj(&why);
    const EnergyCounter nvml{1e-3, std::nullopt, "NVML's energy counter"};
    spans_.add(nvml, span_mj_, mj, t - span_t_, span_why_.empty() ? why : span_why_);
  } else if (span_rapl_) {
    const auto e = rapl_energy(*owner_->rapl_, *span_rapl_, read_rapl(*owner_->rapl_, t));
    spans_.parts.push_back(e.energy);
    spans_.seconds += t - span_t_;
  }
}

// The energy the point's row gets: over its timed spans where there were any, else over the window.
nlohmann::json RunTelemetry::point_energy(const Window& w, EnergyWindow whole) const {
  nlohmann::json e;
  if (w.span_count_ > 0) {
    e = to_json(EnergyWindow{whole.scope, whole.source, w.spans_.total(), w.spans_.seconds});
    e["window"] = "timed";
    e["spans"] = w.span_count_;
  } else {
    e = to_json(whole);
    e["window"] = "point";
  }
  return e;
}

RunTelemetry::Window RunTelemetry::watch() {
  std::optional<RaplReading> r;
  // A node without RAPL has nothing to read: its rows carry no energy, and the run's energy says why
  // once (run_energy), rather than every row of every rank repeating it.
  if (rapl_ && !rapl_->zones.empty()) {
    r = read_rapl(*rapl_, seconds());
    if (!rapl_first_) rapl_first_ = r;
  }
  return Window(this, session_.get(), std::move(r));
}

void RunTelemetry::attach(Window& w, nlohmann::json& metrics) {
  if (w.rapl_) {
    rapl_last_ = read_rapl(*rapl_, seconds());
    metrics["energy"] = point_energy(w, rapl_energy(*rapl_, *w.rapl_, *rapl_last_));
    w.rapl_.reset();
  }
  if (!w.session_) return;
  const auto window = w.session_->end();
  w.session_ = nullptr;
  if (window.empty()) return;
  metrics["telemetry"] = point_summary(window.front(), thresholds_);
  metrics["energy"] = point_energy(w, gpu_energy(window.front()));
  metrics["energy"]["counter"] = session_->identities().front().uuid;  // a MIG slice's: its GPU's
}

nlohmann::json RunTelemetry::run_energy() const {
  if (session_ && !session_->totals().empty()) {
    auto e = to_json(gpu_energy(session_->totals().front()));
    e["counter"] = session_->identities().front().uuid;  // the GPU's, once per host whatever slices share it
    return e;
  }
  if (rapl_ && rapl_->zones.empty()) return to_json(EnergyWindow{"node", "RAPL", {std::nullopt, rapl_->why_none}, 0});
  if (rapl_ && rapl_first_ && rapl_last_) return to_json(rapl_energy(*rapl_, *rapl_first_, *rapl_last_));
  return nullptr;
}

nlohmann::json RunTelemetry::finish(const World& world, const nlohmann::json& ranks) const {
  // This job's processes on this node are not "other processes using the GPU".
  std::vector<unsigned> own;
  const auto pids = world.allgather(std::to_string(pid_));
  for (std::size_t r = 0; r < pids.size(); ++r)
    if (world.hosts()[r] == world.host()) own.push_back(static_cast<unsigned>(std::stoul(pids[r])));

  nlohmann::json mine = nullptr;
  if (session_) {
    const auto& id = session_->identities().front();
    const auto& total = session_->totals().front();
    Verdict v = judge_gpu({id, total, own, {}, this_pid_space() != PidSpace::separate}, thresholds_);
    v.absorb(judge_software(software_, thresholds_));
    mine = to_json(v);
    mine["rank"] = world.rank();
    mine["host"] = world.host();
    mine["gpu"] = {{"index", id.index}, {"name", id.name}, {"uuid", id.uuid}, {"pci_bus_id", id.pci_bus_id ? nlohmann::json(*id.pci_bus_id) : nlohmann::json(nullptr)}};
    mine["mig"] = mig_;
    mine["line"] = v.line();
    mine["summary"] = point_summary(total, thresholds_);
    mine["sampler"] = {{"ticks", session_->ticks()}, {"mean_tick_us", session_->seconds_per_tick() * 1e6}};
  }
  const auto gathered = world.gather_to_root(nlohmann::json{{"gpu", mine}, {"energy", run_energy()}}.dump());
  if (world.rank() != 0) return nullptr;

  nlohmann::json gpus = nlohmann::json::array();
  std::vector<std::string> reasons;
  std::vector<RankEnergy> energies;
  int counts[3] = {0, 0, 0};
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    auto both = nlohmann::json::parse(gathered[r]);
    energies.push_back({static_cast<int>(r), ranks[r].value("host", std::string()), both["energy"]});
    auto j = std::move(both["gpu"]);
    if (j.is_null()) {
      const auto why = ranks[r]["telemetry"].value("reason", std::string("unknown"));
      if (std::find(reasons.begin(), reasons.end(), why) == reasons.end()) reasons.push_back(why);
      continue;
    }
    const auto v = j["verdict"].get<std::string>();
    ++counts[v == "FAIL" ? 2 : v == "WARN" ? 1 : 0];
    gpus.push_back(std::move(j));
  }
  std::vector<UnitFacts> facts;
  for (const auto& r : ranks) facts.push_back(rank_facts(r));
  nlohmann::json consistency = nlohmann::json::array();
  if (thresholds_.consistency != Severity::pass)
    for (const auto& inc : find_inconsistencies(facts)) {
      auto j = to_json(inc, "rank");
      j["severity"] = severity_name(thresholds_.consistency);
      consistency.push_back(std::move(j));
    }
  const std::string status = gpus.empty() ? "unavailable" : reasons.empty() ? "available" : "partial";
  return {{"telemetry", status},
          {"reason", reasons.empty() ? nlohmann::json(nullptr) : nlohmann::json(fmt::format("{}", fmt::join(reasons, "; ")))},
          {"thresholds", thresholds_.source},
          {"interval_ms", static_cast<double>(opts_.interval.count()) / 1000.0},
          {"verdict", gpus.empty() ? "UNKNOWN" : counts[2] ? "FAIL" : counts[1] ? "WARN" : "PASS"},
          {"counts", {{"PASS", counts[0]}, {"WARN", counts[1]}, {"FAIL", counts[2]}}},
          {"gpus", gpus},
          {"consistency", consistency},
          {"energy", run_energy_by_host(energies)}};
}

void flag_throttled(ResultRow& row) {
  bool any = false;
  std::vector<int> ranks;
  for (const auto& r : row.ranks) {
    if (!r.metrics.contains("telemetry")) continue;
    any = true;
    if (r.metrics["telemetry"].value("throttled", false)) ranks.push_back(r.rank);
  }
  if (!any) return;
  row.metrics["throttled"] = !ranks.empty();
  row.metrics["throttled_ranks"] = ranks;
}

}  // namespace gpuscale::health
