#include "health/telemetry.h"

#include <pthread.h>
#include <sched.h>

namespace gpuscale::health {

TelemetrySession::TelemetrySession(std::shared_ptr<const NvmlLibrary> lib, std::vector<NvmlGpu> gpus,
                                   std::chrono::microseconds interval, double load_percent,
                                   std::vector<GpuIdentity> identities)
    : lib_(std::move(lib)),
      gpus_(std::move(gpus)),
      identities_(std::move(identities)),
      interval_(interval),
      load_percent_(load_percent),
      origin_(std::chrono::steady_clock::now()) {
  if (identities_.size() != gpus_.size()) identities_.clear();
  std::vector<nvml::nvmlDevice_t> handles;
  for (const auto& g : gpus_) {
    if (identities_.size() < gpus_.size()) identities_.push_back(g.identity());
    handles.push_back(g.handle());
    totals_.emplace_back(load_percent_);
  }
  xids_ = std::make_unique<XidWatcher>(lib_, handles);
}

TelemetrySession::~TelemetrySession() {
  if (active_) end();
}

double TelemetrySession::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
}

void TelemetrySession::poll_xids() {
  for (const auto& [device, xid] : xids_->poll())
    for (std::size_t i = 0; i < gpus_.size(); ++i)
      if (gpus_[i].handle() == device) window_[i].add(XidEvent{now(), xid});
}

void TelemetrySession::snapshot() {
  std::lock_guard<std::mutex> lock(mu_);
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    window_[i].add(gpus_[i].sample(now()));
    auto c = gpus_[i].counters();
    c.t = now();  // after the energy counter's read: the window's seconds match its energy
    window_[i].add(c);
  }
  poll_xids();
}

void TelemetrySession::sample_all() {
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < gpus_.size(); ++i) window_[i].add(gpus_[i].sample(now()));
  poll_xids();
  ++ticks_;
  tick_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void TelemetrySession::loop() {
  // The sampler runs only on otherwise idle CPU time (SCHED_IDLE): on a node whose cores are all busy
  // (the CPU backend, spinning MPI progress) it waits rather than preempting the benchmark's threads,
  // and a late sample is skipped below. Failing to switch (not Linux) leaves it at normal priority.
  sched_param idle{};
  pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
  std::unique_lock<std::mutex> lock(mu_);
  auto next = std::chrono::steady_clock::now() + interval_;
  while (!stop_) {
    if (cv_.wait_until(lock, next, [this] { return stop_; })) break;
    sample_all();
    next += interval_;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + interval_;  // a slow tick skips samples instead of bursting
  }
}

void TelemetrySession::begin() {
  if (active_) end();
  active_ = true;
  window_.assign(gpus_.size(), Observation(load_percent_));
  snapshot();
  stop_ = false;
  thread_ = std::thread([this] { loop(); });
}

std::vector<Observation> TelemetrySession::end() {
  if (!active_) return {};
  active_ = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  snapshot();
  for (std::size_t i = 0; i < gpus_.size(); ++i) totals_[i].merge(window_[i]);
  return std::move(window_);
}

}  // namespace gpuscale::health
