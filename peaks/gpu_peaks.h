#pragma once
// Expected peaks of GPU models as data: peaks/gpus.json, embedded in the binary at build time,
// plus models a user adds or replaces with `gpuscale run --peaks FILE` (same format; docs/cuda.md).
// A GPU is found by its exact device name (the "NVIDIA " prefix may be missing on either side; never a
// substring: "A10" is not "A100", "H200" is not "H200 NVL"), else by PCI device id + compute
// capability + SM count together. An unknown GPU has no peaks: null with the reason, never guessed.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "peaks/peaks.h"
#include "kernels/cuda/gpu_identity.h"

namespace gpuscale {

struct GpuModel {
  std::string model;               // e.g. "H200 SXM 141GB"
  std::vector<std::string> names;  // device names as the driver reports them
  std::optional<std::uint32_t> pci_device_id;
  std::optional<cuda::ComputeCapability> cc;
  std::optional<int> sm_count;
  ExpectedPeak memory_bandwidth;       // GB/s
  std::map<DType, ExpectedPeak> compute;  // dense TFLOP/s (int8: TOPS)
  ExpectedPeak nvlink;                 // GB/s per direction
  bool nvlink_bridge = false;          // NVLink only through an optional bridge (PCIe cards)
  ExpectedPeak pcie;                   // GB/s per direction
  std::optional<ExpectedPeak> host_link;  // GB/s per direction when the host link is not PCIe (NVLink-C2C)
  std::string origin;                  // "built-in peaks" or the --peaks file
};

// Parses a peaks document; throws gpuscale::Error (exit 2) naming `origin`, the model and the field.
std::vector<GpuModel> parse_gpu_peaks(const std::string& text, const std::string& origin);
// Reads and parses a --peaks file (same errors, plus an unreadable file).
std::vector<GpuModel> load_gpu_peaks_file(const std::string& path);
// The built-in table (peaks/gpus.json as embedded at build time).
const std::string& builtin_gpu_peaks_text();

// The device name without a leading "NVIDIA " and surrounding spaces: the form names are compared in.
std::string normalized_gpu_name(std::string_view name);

class GpuPeakTable final : public PeakTable {
 public:
  // `overrides` (from --peaks) win over `builtin`: looked up first, and a built-in model sharing a name
  // with one of them is dropped.
  GpuPeakTable(std::vector<GpuModel> builtin, std::vector<GpuModel> overrides);

  struct Match {
    const GpuModel* model = nullptr;  // nullptr: unknown GPU
    std::string how;                  // "name 'NVIDIA H200'" or "PCI id 0x2335, compute capability 9.0, 132 SMs"
  };
  Match find(const cuda::GpuIdentity& gpu) const;

  ExpectedPeak memory_bandwidth(const DeviceInfo& device) const override;
  ExpectedPeak compute(const DeviceInfo& device, DType type) const override;
  ExpectedPeak link_bandwidth(const DeviceInfo& device, LinkKind kind) const override;

  const std::vector<GpuModel>& models() const { return models_; }

 private:
  ExpectedPeak figure(const DeviceInfo& device, const std::function<ExpectedPeak(const GpuModel&)>& pick) const;
  std::vector<GpuModel> models_;  // overrides first
};

// The built-in table plus the models of `peaks_file` (empty: none).
std::unique_ptr<GpuPeakTable> make_gpu_peak_table(const std::string& peaks_file);

}  // namespace gpuscale
