#pragma once
// How long an emulated NCCL operation lasts on the simulated clock (tests only). A test computes the
// same numbers from the GPU model without gpuscale.
//
// Model assumptions (stated, not measured):
//  - Ring algorithms. The time is nccl-tests' definition read backwards: busbw = algbw x factor(n)
//    (nccl-tests doc/PERFORMANCE.md, "Bus bandwidth"), so time = bytes x factor(n) / busbw, with
//    bytes nccl-tests' algbw bytes (all_reduce, broadcast, reduce: count x size; all_gather,
//    reduce_scatter: count x size x n) and factor: all_reduce 2(n-1)/n, all_gather and reduce_scatter
//    (n-1)/n, broadcast and reduce 1 (collectives/collective_table.h has the same factors).
//  - busbw = the link's per-direction bandwidth times an efficiency: NVLink (GpuModel::nvlink_gbps)
//    when every member is on one host, kNvlinkEfficiency = 0.80 of it (nccl-tests' all_reduce reaches
//    about 360 of H100 SXM's 450 GB/s; PCIe where the GPU has no NVLink); the NIC (GpuModel::nic_gbps) otherwise, kNicEfficiency = 0.90.
//  - Plus one link latency per ring step: all_reduce 2(n-1) steps, the other collectives n-1,
//    a point-to-point group 1.
//  - Lazy connection: the first operation on a communicator pays GpuModel::collective_connect_us = 50 ms (NCCL 2.22+
//    connects at first use by default: NCCL documentation, "Environment Variables", NCCL_RUNTIME_CONNECT).
//  - A planted slow-link:HOST:F multiplies an operation inside one host by F when that host is its
//    host; slow-nic:HOST:F an operation across hosts by F when HOST is among its members' hosts.
#include <cstdint>
#include <string>
#include <vector>

#include "tests/emulated_gpu/core/gpu_model.h"

namespace emu_nccl {


enum class OpKind { all_reduce, all_gather, reduce_scatter, broadcast, reduce, p2p };

struct SlowFault {
  bool nic = false;  // slow-nic (across hosts); else slow-link (NVLink inside the host)
  std::string host;
  double factor = 1;
};

struct OpShape {
  OpKind kind = OpKind::all_reduce;
  std::uint64_t count = 0;         // the call's count (p2p: bytes, with element_size 1)
  std::uint64_t element_size = 1;
  int nranks = 1;
  std::vector<std::string> hosts;  // host of every member taking part
  bool first_on_comm = false;      // pays the lazy connection
};

// nccl-tests' algbw bytes and bus factor, and the ring's sequential steps.
double algbw_bytes(const OpShape& s);
double bus_factor(OpKind k, int n);
int ring_steps(OpKind k, int n);
// The duration in microseconds, planted slowness included.
double op_duration_us(const OpShape& s, const gpuscale_emu::GpuModel& m, const std::vector<SlowFault>& faults);

}  // namespace emu_nccl
