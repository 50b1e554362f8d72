// The performance model's durations (cost.h).
#include "tests/emulated_gpu/core/cost.h"

#include <algorithm>
#include <stdexcept>

namespace gpuscale_emu {
namespace {
// bytes at gbps (1e9 bytes/s) in microseconds
double transfer_us(double bytes, double gbps) { return bytes / (gbps * 1e9) * 1e6; }
}  // namespace

double memory_us(double bytes, const Device& d) {
  return transfer_us(bytes, d.model.hbm_gbps * d.model.hbm_efficiency) + d.model.kernel_floor_us;
}

double compute_us(double flops, const std::string& dtype_key, const Device& d) {
  const auto it = d.model.tflops.find(dtype_key);
  if (it == d.model.tflops.end() || it->second <= 0)
    throw std::invalid_argument("emulated GPU model '" + d.model.key + "' has no peak for dtype '" + dtype_key + "'");
  return flops / (it->second * 1e12 * d.model.gemm_efficiency) * 1e6 + d.model.kernel_floor_us;
}

double kernel_us(double local_bytes, double peer_bytes, const Device& d, const Device& peer) {
  const GpuModel& m = d.model;
  const bool nvlink = m.nvlink_gbps > 0 && !d.is_mig && !peer.is_mig;
  const double link_gbps = (nvlink ? m.nvlink_gbps : m.pcie_gbps) * m.link_efficiency;
  return std::max(transfer_us(local_bytes, m.hbm_gbps * m.hbm_efficiency), transfer_us(peer_bytes, link_gbps)) +
         m.kernel_floor_us;
}

double copy_us(double bytes, CopyKind kind, const Device& d) {
  const GpuModel& m = d.model;
  switch (kind) {
    case CopyKind::host_to_device:
    case CopyKind::device_to_host: return transfer_us(bytes, m.pcie_gbps * m.link_efficiency) + m.pcie_latency_us;
    case CopyKind::device_to_device: return memory_us(2 * bytes, d);
    case CopyKind::peer:
      if (m.nvlink_gbps > 0 && !d.is_mig)
        return transfer_us(bytes, m.nvlink_gbps * m.link_efficiency) + m.nvlink_latency_us;
      return transfer_us(bytes, m.pcie_gbps * m.link_efficiency) + m.pcie_latency_us;
  }
  return 0;
}

}  // namespace gpuscale_emu
