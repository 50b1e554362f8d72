#pragma once
// A telemetry session over some GPUs: a snapshot (sample + counters + pending Xid events) of each at
// the start and end of every window (a benchmark point, a health check), and a background thread
// sampling the fast fields every `interval` in between. Each window gives one Observation per GPU;
// the session also keeps the total over all windows.
//
// Cost: a snapshot is ~30 NVML calls per GPU, a sample ~9; the sampler thread sleeps between samples
// (a condition variable, so stopping it is immediate) and never touches the benchmark's data.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "health/nvml/nvml_gpu.h"
#include "health/observation.h"

namespace gpuscale::health {

class TelemetrySession {
 public:
  // `load_percent`: utilisation at which a sample counts as under load (Thresholds::load_percent).
  // `identities`: the GPUs' identities when the caller has read them already (else read here).
  TelemetrySession(std::shared_ptr<const NvmlLibrary> lib, std::vector<NvmlGpu> gpus,
                   std::chrono::microseconds interval, double load_percent,
                   std::vector<GpuIdentity> identities = {});
  ~TelemetrySession();
  TelemetrySession(const TelemetrySession&) = delete;
  TelemetrySession& operator=(const TelemetrySession&) = delete;

  const std::vector<GpuIdentity>& identities() const { return identities_; }
  const std::vector<NvmlGpu>& gpus() const { return gpus_; }
  // Why Xid events are not (all) watched, "" when they are.
  const std::string& xid_unsupported() const { return xids_ ? xids_->unsupported() : no_xids_; }

  void begin();                     // snapshot every GPU, start sampling
  std::vector<Observation> end();   // stop sampling, snapshot every GPU; this window per GPU ({} without begin)
  const std::vector<Observation>& totals() const { return totals_; }

  // Sampler ticks so far and their mean cost in seconds (NVML calls of all GPUs per tick).
  std::size_t ticks() const { return ticks_; }
  double seconds_per_tick() const { return ticks_ ? tick_seconds_ / static_cast<double>(ticks_) : 0; }

 private:
  double now() const;
  void snapshot();           // caller thread, sampler stopped
  void sample_all();         // sampler thread, under mu_
  void poll_xids();          // under mu_
  void loop();

  std::shared_ptr<const NvmlLibrary> lib_;
  std::vector<NvmlGpu> gpus_;
  std::vector<GpuIdentity> identities_;
  std::unique_ptr<XidWatcher> xids_;
  std::string no_xids_;
  std::chrono::microseconds interval_;
  double load_percent_;
  std::chrono::steady_clock::time_point origin_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, active_ = false;
  std::thread thread_;
  std::vector<Observation> window_, totals_;
  std::size_t ticks_ = 0;
  double tick_seconds_ = 0;
};

}  // namespace gpuscale::health
