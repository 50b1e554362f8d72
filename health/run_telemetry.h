#pragma once
// The runner's hook (harness/run/runner.cpp): each rank watches its own GPU with NVML while it measures.
//   open():     find this rank's GPU (by UUID / PCI bus id from DeviceInfo.details) and load the rules
//   identity(): ranks[].telemetry in the result file (static identity, or "unavailable" and why)
//   watch() / attach(): a window around one point; its summary and energy go into the rank's row metrics
//   finish():   every rank's verdict, gathered on rank 0 with the cross-rank consistency warnings,
//               and the energy of each GPU and node over the run
// The CPU backend has no GPU: its telemetry is "unavailable", and its energy is the node's RAPL. Tests map CPU ranks to the fake NVML's
// GPUs by local rank with GPUSCALE_TEST_FAULT=telemetry:by-index (recorded in the file's test_fault).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/timed_span.h"
#include "health/energy_counter.h"
#include "health/rapl.h"
#include "health/row_energy.h"
#include "health/telemetry.h"
#include "health/telemetry_options.h"
#include "health/thresholds.h"
#include "health/verdict.h"
#include "kernels/device.h"
#include "results/result_file.h"
#include "world/world.h"

namespace gpuscale::health {

inline constexpr const char* kTestTelemetryByIndex = "telemetry:by-index";

class RunTelemetry {
 public:
  // Never throws for a missing NVML or GPU (telemetry is then unavailable); the thresholds file was
  // checked when the flags were read.
  static std::unique_ptr<RunTelemetry> open(const TelemetryOptions& opts, const World& world, const DeviceInfo& device,
                                            const nlohmann::json& backend_software);
  ~RunTelemetry();

  bool available() const { return session_ != nullptr; }
  nlohmann::json identity() const;

  // A window around one point on this rank: its GPU's telemetry, or its node's RAPL reading on the
  // CPU backend (nothing when telemetry is off). While it is open it listens to the point's timed
  // spans (core/timed_span.h) and reads the energy counter at each end of each: the point's energy is
  // that of its timed repetitions, where its driver opened spans, and the whole point's otherwise.
  class Window final : public TimedSpanListener {
   public:
    Window(const RunTelemetry* owner, TelemetrySession* s, std::optional<RaplReading> rapl);
    ~Window() override;
    Window(const Window&) = delete;
    Window& operator=(const Window&) = delete;
    void span_opened() override;
    void span_closed() override;

   private:
    friend class RunTelemetry;
    const RunTelemetry* owner_;
    TelemetrySession* session_;
    std::optional<RaplReading> rapl_;
    TimedSpanListener* previous_ = nullptr;
    bool listening_ = false;
    // The spans so far: their energy, and the reading at the open one's start.
    SpanEnergy spans_;
    int span_count_ = 0;
    double span_t_ = 0;
    std::optional<std::uint64_t> span_mj_;
    std::optional<RaplReading> span_rapl_;
    std::string span_why_;
  };
  Window watch();
  // Ends the window and stores its summary as metrics["telemetry"] and its energy as metrics["energy"].
  void attach(Window& w, nlohmann::json& metrics);

  // Collective: every rank calls it. Rank 0 gets the result file's "health" section; others null.
  nlohmann::json finish(const World& world, const nlohmann::json& ranks) const;

 private:
  RunTelemetry() = default;
  TelemetryOptions opts_;
  Thresholds thresholds_;
  std::string why_unavailable_;
  std::shared_ptr<const NvmlLibrary> lib_;
  SystemInfo system_;
  std::unique_ptr<TelemetrySession> session_;
  SoftwareVersions software_;
  nlohmann::json match_, mig_;
  unsigned pid_ = 0;
  // The CPU backend's energy: the node's RAPL packages, read around each point; the run's first and
  // last readings give its energy for the run.
  std::optional<Rapl> rapl_;
  std::optional<RaplReading> rapl_first_, rapl_last_;
  double seconds() const;  // on the RAPL readings' clock
  nlohmann::json run_energy() const;  // this rank's GPU or node over the run (null when none)
  nlohmann::json point_energy(const Window& w, EnergyWindow whole) const;
};

// Sets row.metrics["throttled"] (and "throttled_ranks") from the ranks' telemetry summaries; leaves
// rows without telemetry as they are.
void flag_throttled(ResultRow& row);

}  // namespace gpuscale::health
