#pragma once
// Expected peaks that results are set against. A peak is a figure with its source, or unknown with
// the reason: never guessed.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/dtype.h"
#include "kernels/device.h"

namespace gpuscale {

struct ExpectedPeak {
  std::optional<double> value;  // GB/s or TFLOP/s
  std::string source;           // where the figure comes from, or why there is none
};

// Links of a device, for copy bandwidth and collectives (GB/s per direction).
enum class LinkKind {
  nvlink,  // GPU to GPU over NVLink
  pcie,    // the device's PCIe link
  host,    // to host memory: PCIe, or NVLink-C2C on Grace systems
  peer,    // GPU to GPU as the model is usually built: NVLink, or PCIe when NVLink is an optional bridge
};

// Per-device peaks (memory bandwidth, dense compute per dtype, links), looked up by device identity.
class PeakTable {
 public:
  virtual ~PeakTable() = default;
  virtual ExpectedPeak memory_bandwidth(const DeviceInfo& device) const = 0;  // GB/s
  virtual ExpectedPeak compute(const DeviceInfo& device, DType type) const = 0;  // TFLOP/s, dense
  virtual ExpectedPeak link_bandwidth(const DeviceInfo& device, LinkKind kind) const {
    (void)device;
    (void)kind;
    return {std::nullopt, "this peak table has no link figures"};
  }
};

// The slowest link a collective crosses, per topology level (GB/s, one direction, the unit of busbw).
struct LinkPeaks {
  ExpectedPeak intra_node;
  ExpectedPeak inter_node;
  // When set, the intra-node reference is found when first asked for (the CPU backend's shared memory:
  // a local copy beyond the caches, measured once); called on rank 0 only. It may use the size.
  std::function<ExpectedPeak(std::uint64_t bytes)> intra_node_at;
};

}  // namespace gpuscale
