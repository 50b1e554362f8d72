#pragma once
// Which GPU each rank uses: pure decisions over what every rank reports (its host, local rank, and
// the UUIDs of the GPUs it sees, which CUDA_VISIBLE_DEVICES and Slurm's --gpus-per-task shape), so
// every launch shape is unit-tested without a GPU or MPI.
//
// Ranks of one host that see the same GPUs share them: the i-th of them (by local rank) takes the
// i-th GPU. With no binding every rank sees every GPU, so local rank i -> GPU i; with
// --gpus-per-task=1 each rank sees only its own GPU and takes it (ordinal 0). More ranks than GPUs is
// an error naming the host and both counts, as is two ranks ending up on one GPU.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale {

struct RankGpus {
  int rank = 0;
  std::string host;
  int local_rank = 0;
  std::vector<std::string> uuids;  // GPUs this rank sees, in CUDA ordinal order
  std::optional<std::string> visible_devices;  // CUDA_VISIBLE_DEVICES, when set
};

struct GpuAssignment {
  int ordinal = 0;   // CUDA ordinal in that rank's process
  std::string rule;  // how it was chosen, recorded in the result file
};

struct RankGpuCount {
  int rank = 0;
  std::string host;
  int gpus = 0;
  std::string why_none;  // the CUDA runtime's reason when gpus == 0
};
// nullopt when every rank sees a GPU; else why not, the same text on every rank: the reason alone when
// every rank has none for the same reason, else the first such rank, its host and its reason.
std::optional<std::string> ranks_without_gpus(const std::vector<RankGpuCount>& ranks);

// One assignment per rank, in the order given. Throws gpuscale::Error (kExitNoDevice) with the same
// message on every rank that evaluates it.
std::vector<GpuAssignment> assign_gpus(const std::vector<RankGpus>& ranks);

// CUDA_VISIBLE_DEVICES as the driver reads it: the comma-separated entries up to the first that is
// not a device index, UUID ("GPU-...") or MIG id ("MIG-..."); an empty list hides every GPU.
std::vector<std::string> parse_visible_devices(std::string_view value);
// Why a process sees no GPU, with the environment's part in it: the CUDA runtime's reason, plus
// "CUDA_VISIBLE_DEVICES='-1' hides every GPU" when that is the cause.
std::string no_device_reason(std::string_view cuda_reason, const std::optional<std::string>& visible_devices);

// MIG slices: a CUDA process enumerates one MIG device only, whatever its environment lists, so ranks
// of a pod or node given several slices (the device plugin's NVIDIA_VISIBLE_DEVICES in Kubernetes, or
// a CUDA_VISIBLE_DEVICES of several MIG-<uuid>) would all see the first. When the list in force
// (CUDA_VISIBLE_DEVICES when set, else NVIDIA_VISIBLE_DEVICES) holds two or more MIG entries, local
// rank i takes the i-th: the binding sets CUDA_VISIBLE_DEVICES to that entry alone before CUDA starts.
// A rank started by sshd (the MPI Operator's launcher) has neither variable: sshd gives its sessions a
// fresh environment. The container's own first process has the device plugin's list, so then
// `container_visible_devices` (NVIDIA_VISIBLE_DEVICES in /proc/1/environ) is the list in force.
struct MigBinding {
  std::string visible_devices;  // the value for CUDA_VISIBLE_DEVICES
  std::string rule;             // recorded in the result file
};
// nullopt when there is no list of slices to split. Throws gpuscale::Error (kExitNoDevice) when the
// node has more local ranks than slices, naming both counts.
std::optional<MigBinding> mig_slice_binding(const std::optional<std::string>& cuda_visible_devices,
                                            const std::optional<std::string>& nvidia_visible_devices,
                                            int local_rank, int local_size,
                                            const std::optional<std::string>& container_visible_devices = std::nullopt);

// The value of `name` in a process environment as /proc/PID/environ holds it (NUL-separated NAME=value
// entries); nullopt when absent.
std::optional<std::string> environ_value(std::string_view environ, std::string_view name);

}  // namespace gpuscale
