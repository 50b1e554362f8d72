#include "harness/guard/watchdog.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/term_text.h"

namespace gpuscale {

WatchdogRates watchdog_rates(const std::string& backend) {
  // A slow GPU: PCIe-class copies, fp64 on a consumer card. A slow CPU rank: one old core.
  if (backend == "cuda") return {50e9, 1e12};
  return {1e9, 5e9};
}

double watchdog_budget(const PointDemand& demand, const std::string& backend, std::optional<double> override_s) {
  if (override_s) return *override_s;
  const auto r = watchdog_rates(backend);
  const double expected = demand.bytes / r.bytes_per_s + demand.flops / r.flops_per_s + demand.setup_s + demand.fixed_s;
  const double transport = demand.transport_timeout_s > 0 ? demand.transport_timeout_s + kWatchdogTransportGrace : 0;
  return std::max({kWatchdogFloorSeconds, kWatchdogMultiple * expected, transport});
}

ProgressVerdict judge_progress(const std::vector<RankState>& states, double budget_s) {
  double freshest = -1;  // the idle seconds of the rank whose last step is the most recent
  for (const auto& s : states)
    if (s.answered && (freshest < 0 || s.idle_s < freshest)) freshest = std::max(0.0, s.idle_s);
  if (freshest < 0 || freshest >= budget_s) return {true, 0};
  // A millisecond past the budget, so the next look finds it run out despite the sums' rounding.
  return {false, std::max(kWatchdogMinLookSeconds, budget_s - freshest + 1e-3)};
}

namespace {

// "its last step 130 s ago": there is one, as every rank marks the start of each point (RunGuard).
std::string last_step(const RankState& s) { return fmt::format("its last step {:.0f} s ago", s.idle_s); }

std::string who(const RankState& s) {
  return s.pid > 0 ? fmt::format("rank {} ({}, pid {})", s.rank, terminal_safe(s.host), s.pid)
                   : fmt::format("rank {} ({})", s.rank, terminal_safe(s.host));
}

std::string rank_list(const std::vector<const RankState*>& v) {
  std::string out = v.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]->rank);
  return out;
}

}  // namespace

StallReport describe_stall(const StalledPoint& point, const std::vector<RankState>& states) {
  std::vector<const RankState*> working, waiting, silent;
  for (const auto& s : states) {
    if (!s.answered) silent.push_back(&s);
    else if (s.phase == Phase::computing || s.phase == Phase::idle) working.push_back(&s);
    else waiting.push_back(&s);
  }
  std::string msg = fmt::format("watchdog: {} made no progress for {:.0f} s (no rank completed a step)",
                                terminal_safe(point.label), point.budget_s);
  for (const auto* s : working)
    msg += fmt::format("; {} stalled in its own work ({}{}; {})", who(*s), phase_name(s->phase),
                       s->doing.empty() ? "" : ": " + terminal_safe(s->doing), last_step(*s));
  if (!waiting.empty()) {
    // Group the waiting ranks by what they wait in, so 255 ranks read as one clause.
    std::vector<std::pair<std::string, std::vector<const RankState*>>> groups;
    for (const auto* s : waiting) {
      const std::string what = fmt::format("{}{}", phase_name(s->phase), s->doing.empty() ? "" : ": " + s->doing);
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == what; });
      if (it == groups.end()) groups.push_back({what, {s}});
      else it->second.push_back(s);
    }
    const bool blamed = !working.empty() || !silent.empty();
    for (const auto& [what, ranks] : groups)
      msg += fmt::format("; {} {} ({})", rank_list(ranks), blamed ? "waited for it" : "waited", terminal_safe(what));
    if (!blamed) msg += "; no rank was in its own work: the transport itself stalled";
  }
  if (!silent.empty())
    msg += fmt::format("; {} did not answer (the process or its node may be hung)", rank_list(silent));

  nlohmann::json ranks = nlohmann::json::array();
  nlohmann::json stalled = nlohmann::json::array();
  for (const auto& s : states) {
    ranks.push_back({{"rank", s.rank},
                     {"host", s.host},
                     {"pid", s.pid},
                     {"answered", s.answered},
                     {"phase", s.answered ? nlohmann::json(phase_name(s.phase)) : nlohmann::json(nullptr)},
                     {"doing", s.answered ? nlohmann::json(s.doing) : nlohmann::json(nullptr)},
                     {"progress", s.answered ? nlohmann::json(s.progress) : nlohmann::json(nullptr)},
                     {"idle_s", s.answered ? nlohmann::json(s.idle_s) : nlohmann::json(nullptr)}});
  }
  for (const auto* s : working.empty() ? silent : working) stalled.push_back(s->rank);
  return {msg,
          {{"benchmark", point.benchmark},
           {"params", point.params},
           {"gpu_count", point.gpu_count},
           {"budget_s", point.budget_s},
           {"stalled_ranks", stalled},
           {"ranks", ranks},
           {"message", msg}}};
}

Watchdog::Watchdog(std::function<double(const StalledPoint&)> look) : look_(std::move(look)) {
  thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::arm(StalledPoint point, double extra_s) {
  {
    std::lock_guard lock(mutex_);
    ++generation_;
    if (point.budget_s <= 0) {
      armed_.reset();
    } else {
      deadline_ = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(point.budget_s + extra_s));
      armed_ = std::move(point);
    }
  }
  cv_.notify_all();
}

void Watchdog::disarm() {
  {
    std::lock_guard lock(mutex_);
    ++generation_;
    armed_.reset();
  }
  cv_.notify_all();
}

void Watchdog::loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (!armed_) {
      cv_.wait(lock);
      continue;
    }
    if (cv_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ && !stop_ &&
        std::chrono::steady_clock::now() >= deadline_) {
      const StalledPoint point = *armed_;
      const auto looked_at = generation_;
      lock.unlock();
      const double again = look_(point);
      lock.lock();
      if (generation_ != looked_at) continue;  // the point ended (or another began) during the look
      if (again > 0) {
        deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                            std::chrono::duration<double>(again));
      } else {
        armed_.reset();
      }
    }
  }
}

}  // namespace gpuscale
