#include "core/fault.h"

#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "core/host_name.h"

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

std::vector<SlowHost> parse_slow_hosts(std::string_view fault_list) {
  constexpr std::string_view kPrefix = "slow-host:";
  std::vector<SlowHost> out;
  while (!fault_list.empty()) {
    const auto comma = fault_list.find(',');
    const auto item = fault_list.substr(0, comma);
    fault_list = comma == std::string_view::npos ? std::string_view{} : fault_list.substr(comma + 1);
    if (item.substr(0, kPrefix.size()) != kPrefix) continue;
    auto bad = [&](std::string_view why) {
      return Error(fmt::format("invalid {} item '{}': {} (use slow-host:NAME:FACTOR, FACTOR > 1)", kFaultEnv, item, why));
    };
    const auto rest = item.substr(kPrefix.size());
    const auto colon = rest.rfind(':');
    if (colon == std::string_view::npos) throw bad("no factor");
    const auto name = rest.substr(0, colon), number = rest.substr(colon + 1);
    if (!is_host_name(name)) throw bad("the host is not a host name (letters, digits, '-', '.', '_')");
    double factor = 0;
    const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), factor);
    if (ec != std::errc() || ptr != number.data() + number.size() || number.empty())
      throw bad("the factor is not a number");
    if (!(std::isfinite(factor) && factor > 1)) throw bad("the factor must be a finite number greater than 1");
    for (const auto& s : out)
      if (s.host == name) throw bad("the host is already listed");
    out.push_back({std::string(name), factor});
  }
  return out;
}

double slow_host_factor(std::string_view fault_list, std::string_view host) {
  for (const auto& s : parse_slow_hosts(fault_list))
    if (s.host == host) return s.factor;
  return 1;
}

double slow_host_factor(std::string_view host) {
  const char* env = std::getenv(kFaultEnv);
  return env == nullptr ? 1 : slow_host_factor(env, host);
}

namespace {
std::atomic<double> g_slowdown{1.0};
}  // namespace

void plant_slowdown(double factor) { g_slowdown.store(factor > 1 ? factor : 1.0); }

double planted_slowdown() { return g_slowdown.load(); }

double stretch_timed(double seconds) {
  const double f = planted_slowdown();
  if (f <= 1 || !(seconds > 0)) return seconds;
  // Reported, not slept: a sleeping rank hands its core to the others, and on a machine of more ranks
  // than cores that speeds them up while it sleeps and speeds it up once they are done (its best
  // repetitions then run alone), so the planted factor would drift with the load. Reported, each
  // repetition is exactly FACTOR times the rank's own time under the same load as everyone's; a
  // collective's time reduced over the group (max) carries it to the group's figure.
  return seconds * f;
}

void stall_for_test() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

}  // namespace gpuscale
