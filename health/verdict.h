#pragma once
// The verdict on one GPU: PASS, WARN or FAIL with the findings that made it, judged from its identity,
// what it did over a window (health/observation.h) and, for `gpuscale health`, short bandwidth and
// GEMM runs, under the rules of health/thresholds.h. Pure logic, unit-tested without NVML or a GPU.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "health/gpu_state.h"
#include "health/observation.h"
#include "health/thresholds.h"

namespace gpuscale::health {

struct Finding {
  std::string check;  // "clock_events", "ecc", "row_remap", "xid", "pcie", "nvlink", "clocks", ...
  Severity severity = Severity::warn;
  std::string message;
};

struct Verdict {
  Severity severity = Severity::pass;
  std::vector<Finding> findings;  // warn and fail only, most severe first
  std::vector<std::string> notes;  // what could not be judged, and why

  void add(const std::string& check, Severity s, const std::string& message);  // a pass severity is dropped
  void note(const std::string& text) { notes.push_back(text); }
  void absorb(const Verdict& other);  // findings and notes of another verdict (e.g. the node's)
  // "FAIL: row remapping pending; Xid 79 (GPU has fallen off the bus)" or "PASS".
  std::string line() const;
};

// A short bandwidth or GEMM run of `gpuscale health` (health/perf_probe.h).
struct PerfResult {
  std::string check;        // "memory_bandwidth" or "gemm"
  std::string what;         // "stream.triad fp64 2 GiB" ...
  std::string unit;         // "GB/s", "TFLOP/s"
  std::optional<double> value;
  std::optional<double> peak;
  std::string peak_source;  // or why the peak is unknown
  bool ran = true;          // false: not run (no CUDA device for this GPU, --no-perf); `error` says why
  bool valid = true;        // verification passed
  std::string error;        // why it failed or was not run
};

struct GpuJudgement {
  const GpuIdentity& identity;
  const Observation& observation;
  std::vector<unsigned> own_pids;  // this job's processes: not "another process using the GPU"
  std::vector<PerfResult> perf;
  // False in a PID namespace of our own (health/pid_namespace.h): NVML's PIDs are the host's, own_pids
  // are ours, so only their counts can be compared; "in use" is then said only when NVML lists more
  // processes than the job has, and otherwise "cannot tell (PID namespace)" is a note.
  bool pids_comparable = true;
};

Verdict judge_gpu(const GpuJudgement& in, const Thresholds& t);

// Versions of the driver and of the CUDA stack gpuscale runs on (null where unknown).
struct SoftwareVersions {
  std::optional<std::string> driver;          // NVML: "550.54.15"
  std::optional<int> driver_cuda;             // NVML: the CUDA version the kernel driver supports (12040)
  std::optional<int> libcuda_cuda;            // cudaDriverGetVersion: the user-space driver library loaded
  std::optional<int> runtime_cuda;            // cudaRuntimeGetVersion: the CUDA runtime gpuscale uses
  std::optional<std::string> nccl;            // ncclGetVersion
};
// The versions from NVML's view of the driver and a backend's software() ("driver": the CUDA version
// of the driver library loaded, "cuda_runtime", "nccl"; null or absent where not applicable).
SoftwareVersions software_versions(const SystemInfo& nvml, const nlohmann::json& backend_software);
// "12.4" from 12040.
std::string cuda_version_text(int v);
// "12.4" / "12.4.1" / "13.0" -> 12040 / 12040 / 13000; nullopt for anything else.
std::optional<int> parse_cuda_version(const std::string& text);

// Driver too old for the CUDA runtime, or a container whose driver library differs from the host's
// driver: one finding each, naming the versions. Applies to every GPU of the node.
Verdict judge_software(const SoftwareVersions& v, const Thresholds& t);

nlohmann::json to_json(const Verdict& v);
nlohmann::json to_json(const PerfResult& p);
nlohmann::json to_json(const SoftwareVersions& v);

}  // namespace gpuscale::health
