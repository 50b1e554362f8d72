#pragma once
// `gpuscale health`: a fast preflight of every GPU of this node (well under a minute): NVML's checks
// (health/verdict.h) over a short watched window in which each GPU runs a short bandwidth and GEMM
// check (health/perf_probe.h) when a GPU backend can open it, the node's driver and CUDA versions,
// and GPUs of the node that differ from the rest. One process per node, no MPI.
//
// Exit codes (docs/health.md): 0 every GPU PASS, 1 a WARN, 2 a FAIL, 3 no GPU to check, 5 the check
// could not run (bad flags, unreadable thresholds file or output path, internal error). Not 4: that is
// gpuscale's "interrupted by a signal" (core/error.h).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "health/consistency.h"
#include "health/dcgm/dcgm_verdict.h"
#include "health/local_gpus.h"
#include "health/perf_probe.h"
#include "health/telemetry_options.h"
#include "health/verdict.h"

namespace gpuscale::health {

enum HealthExit : int {
  kHealthPass = 0,
  kHealthWarn = 1,
  kHealthFail = 2,
  kHealthNoGpu = 3,
  kHealthCannotCheck = 5,
};

struct HealthOptions {
  TelemetryOptions telemetry;  // NVML library, sampling period, thresholds file
  bool perf = true;            // the bandwidth and GEMM runs (--no-perf: NVML checks only)
  PerfOptions perf_options;
  std::string peaks_file;
  std::string node_name;       // for --drain-command (default $SLURMD_NODENAME, else the short hostname)
  DcgmRequest dcgm;            // --dcgm rN: `dcgmi diag -r N -j` after the checks (health/dcgm/dcgm_verdict.h)
};

struct GpuReport {
  GpuIdentity identity;
  std::optional<int> cuda_ordinal;  // the GPU backend's ordinal that ran the perf checks
  std::vector<PerfResult> perf;
  Observation observation;
  Verdict verdict;
  nlohmann::json summary;  // samples, clocks, temperature, power, clock events seen (health/observation.h)
};

struct HealthReport {
  int exit_code = kHealthPass;
  std::string host, node_name, thresholds;
  std::string nvml_library, nvml_status, nvml_reason;  // status "available" or "unavailable"
  std::vector<std::string> nvml_missing_symbols;
  SystemInfo system;
  SoftwareVersions software;
  std::string xid_events;        // "watched" or why not
  std::string no_gpu_reason;     // set with exit code 3
  Verdict node;                  // findings about the node as a whole (NVML broken, versions)
  std::vector<GpuReport> gpus;
  std::vector<Inconsistency> consistency;
  std::optional<DcgmOutcome> dcgm;  // with --dcgm: DCGM's results per GPU (gpus[i] is dcgm->gpus[i]) or its problem
  double seconds = 0;
  std::size_t sampler_ticks = 0;  // background samples taken, and their mean cost (all GPUs per tick)
  double sampler_tick_us = 0;
};

// `gpus` may be null (no GPU backend: the perf checks are not run, `why_no_gpus` says why). With
// opts.dcgm.level, throws gpuscale::Error (exit 5) before checking anything when dcgmi is not installed.
HealthReport run_health_check(const HealthOptions& opts, LocalGpus* gpus, const std::string& why_no_gpus);

// One line per GPU ("GPU 0 00000000:18:00.0 NVIDIA H100 80GB HBM3 GPU-...: PASS"), or the one line
// saying why there is nothing to check.
std::vector<std::string> report_lines(const HealthReport& r);
// The `scontrol update nodename=... state=drain reason="gpuscale: ..."` line for a node with a failing GPU
// (or, without GPUs, a failing node), "" otherwise: also when DCGM could not be read (exit 5) after a
// GPU failed, so the failure still reaches the drain list.
std::string drain_command(const HealthReport& r);
// This node's report: one entry of the -o document's "nodes" (health/health_job.h puts them together;
// schema health/schema/health-v1.schema.json).
nlohmann::json report_json(const HealthReport& r);

}  // namespace gpuscale::health
