#include "core/fault.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale {

bool fault_injected(std::string_view fault) {
  const char* env = std::getenv(kFaultEnv);
  if (env == nullptr) return false;
  std::string_view list(env);
  while (!list.empty()) {
    auto comma = list.find(',');
    auto item = list.substr(0, comma);
    if (item == fault) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

std::vector<TimingFault> timing_faults_from_env(const std::vector<std::string>& hosts) {
  const char* env = std::getenv(kFaultEnv);
  if (env == nullptr) return {};
  auto faults = parse_timing_faults(env);
  check_fault_places(faults, hosts);
  return faults;
}

namespace {

// The planted faults of this process, set once by plant_faults before anything is timed, read by the
// timed loops (which may run on a backend's own thread: the active factors are atomics).
struct Planted {
  std::vector<TimingFault> faults;  // the items acting on this rank
  std::vector<TimingFault> all;     // every timing item (flaky draws follow the list's order)
  std::string host;
  int local_index = 0;
  std::chrono::steady_clock::time_point start;
  std::mt19937_64 draws;
  std::mt19937_64 flips;  // flip-bit's own draws, so they leave flaky's sequence as it was
  double reported = 1;
};
Planted g_planted;
std::atomic<bool> g_any{false};
std::atomic<double> g_compute{1.0}, g_memory{1.0}, g_comm{1.0};

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h;
}

std::atomic<double>& active(FaultSite site) {
  return site == FaultSite::compute ? g_compute : site == FaultSite::memory ? g_memory : g_comm;
}

}  // namespace

void plant_faults(const std::vector<TimingFault>& faults, const std::string& host, int local_index) {
  g_planted.all = faults;
  g_planted.faults = faults_of_rank(faults, host, local_index);
  g_planted.host = host;
  g_planted.local_index = local_index;
  g_planted.start = std::chrono::steady_clock::now();
  g_planted.draws.seed(fnv1a(host));
  g_planted.flips.seed(fnv1a(host) ^ static_cast<std::uint64_t>(local_index));
  g_planted.reported = reported_factor(faults, host);
  g_any.store(!g_planted.faults.empty());
}

std::optional<std::uint64_t> flip_bit_due() {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const auto& f : g_planted.faults)
    if (f.kind == FaultKind::flip_bit && unit(g_planted.flips) < f.probability) return g_planted.flips();
  return std::nullopt;
}

FaultScope::FaultScope(const WorkPlace& place) {
  saved_ = {g_compute.load(), g_memory.load(), g_comm.load()};
  if (!g_any.load()) return;
  std::vector<double> draws;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const auto& f : g_planted.all)
    if (f.kind == FaultKind::flaky) draws.push_back(unit(g_planted.draws));
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_planted.start).count();
  const auto p = planted_factors(g_planted.faults, g_planted.host, g_planted.local_index, place, elapsed, draws);
  g_compute.store(p.compute);
  g_memory.store(p.memory);
  g_comm.store(p.comm);
}

FaultScope::~FaultScope() {
  g_compute.store(saved_.compute);
  g_memory.store(saved_.memory);
  g_comm.store(saved_.comm);
}

double spend_planted(FaultSite site, double seconds) {
  const double f = active(site).load();
  if (f <= 1 || !(seconds > 0)) return 0;
  // Slept, so the time is spent where the fault acts: in a collective the other ranks wait for this one
  // inside their own timed operation. On a machine of more ranks than cores the sleeping rank hands its
  // core to the others, which then run faster: the planted rank is at least F times slower than its
  // own time under load, and the test's margins are set for that (docs/fleet.md).
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>((f - 1) * seconds));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool planted_at(FaultSite site) { return active(site).load() > 1; }

double stretch_timed(double seconds) {
  const double f = g_planted.reported;
  if (f <= 1 || !(seconds > 0)) return seconds;
  return seconds * f;  // reported, not slept: each repetition exactly F times the rank's own time
}

void stall_for_test() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

}  // namespace gpuscale
