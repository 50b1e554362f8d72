#include "tests/emulated_gpu/nccl/collective_model.h"

#include <algorithm>

namespace emu_nccl {

double algbw_bytes(const OpShape& s) {
  const double b = static_cast<double>(s.count) * static_cast<double>(s.element_size);
  switch (s.kind) {
    case OpKind::all_gather:
    case OpKind::reduce_scatter: return b * s.nranks;
    default: return b;
  }
}

double bus_factor(OpKind k, int n) {
  switch (k) {
    case OpKind::all_reduce: return 2.0 * (n - 1) / n;
    case OpKind::all_gather:
    case OpKind::reduce_scatter: return static_cast<double>(n - 1) / n;
    case OpKind::broadcast:
    case OpKind::reduce:
    case OpKind::p2p: return n > 1 ? 1.0 : 0.0;  // one rank moves nothing
  }
  return 1.0;
}

int ring_steps(OpKind k, int n) {
  switch (k) {
    case OpKind::all_reduce: return 2 * (n - 1);
    case OpKind::p2p: return n > 1 ? 1 : 0;
    default: return n - 1;
  }
}

double op_duration_us(const OpShape& s, const gpuscale_emu::GpuModel& m, const std::vector<SlowFault>& faults) {
  const bool one_host = std::all_of(s.hosts.begin(), s.hosts.end(), [&](const std::string& h) { return h == s.hosts.front(); });
  // Inside a host without NVLink (h100-pcie) the ring runs over PCIe, at NVLink's efficiency.
  const bool nvlink = m.nvlink_gbps > 0;
  const double busbw_gbps = one_host ? (nvlink ? m.nvlink_gbps : m.pcie_gbps) * m.collective_nvlink_efficiency : m.nic_gbps * m.collective_nic_efficiency;
  const double latency_us = one_host ? (nvlink ? m.nvlink_latency_us : m.pcie_latency_us) : m.nic_latency_us;
  // bytes / (GB/s x 1e9) seconds = bytes / (GB/s x 1e3) microseconds
  double us = ring_steps(s.kind, s.nranks) * latency_us;
  if (busbw_gbps > 0) us += algbw_bytes(s) * bus_factor(s.kind, s.nranks) / (busbw_gbps * 1e3);
  double slow = 1;
  for (const auto& f : faults) {
    const bool involved = std::find(s.hosts.begin(), s.hosts.end(), f.host) != s.hosts.end();
    if (involved && f.nic == !one_host) slow = std::max(slow, f.factor);
  }
  us *= slow;
  if (s.first_on_comm) us += m.collective_connect_us;
  return us;
}

}  // namespace emu_nccl
