#pragma once
// How long work lasts on an emulated GPU: the performance model every emulated library charges its
// operations with (tests only). Durations in microseconds, before planted slowness and noise (the core
// applies those when the operation runs: emu_core.h's effective_duration_us). A test computes its
// oracle from these functions and the GpuModel's figures.
#include <cstdint>
#include <string>

#include "tests/emulated_gpu/core/emu_core.h"

namespace gpuscale_emu {

// A kernel streaming `bytes` through HBM: bytes / (hbm_gbps x hbm_efficiency) plus the kernel floor
// (model.kernel_floor_us, 2 us: a stated assumption for an empty kernel's launch-to-end time on the GPU).
double memory_us(double bytes, const Device& d);

// A compute-bound kernel of `flops` operations at the dtype's dense peak ("fp64", "bf16", ... as
// peaks/gpus.json's compute keys) x gemm_efficiency, plus the kernel floor. Throws
// std::invalid_argument for a dtype the model has no peak for.
double compute_us(double flops, const std::string& dtype_key, const Device& d);

// A kernel moving `local_bytes` in its own GPU's HBM and `peer_bytes` in another GPU's memory (an SM
// copy between GPUs: peer access over NVLink, or PCIe without it or on a MIG instance): the floor plus
// the longer of the two transfers, each at its bandwidth x efficiency (the HBM's and the link's).
double kernel_us(double local_bytes, double peer_bytes, const Device& d, const Device& peer);

enum class CopyKind { host_to_device, device_to_host, device_to_device, peer };

// A copy-engine copy of `bytes`:
//   host_to_device, device_to_host: over PCIe at pcie_gbps x link_efficiency, plus pcie_latency_us;
//   device_to_device: in HBM, read plus write (2 x bytes) at hbm_gbps x hbm_efficiency, plus the floor;
//   peer: over NVLink at nvlink_gbps x link_efficiency plus nvlink_latency_us, or over PCIe (its
//   bandwidth and latency) when the model has no NVLink or either side is a MIG instance.
double copy_us(double bytes, CopyKind kind, const Device& d);

}  // namespace gpuscale_emu
