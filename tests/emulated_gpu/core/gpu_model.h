#pragma once
// The GPU models the emulated node runs at (tests only). Each is built from the datasheet peaks that
// peaks/gpus.json records for that GPU (its source line is cited beside each figure in gpu_model.cpp),
// times a stated efficiency: the fraction of a peak a well-written benchmark reaches on that GPU
// (BabelStream's triad, cuBLAS's large GEMMs, nccl-tests' busbw). A test computes its oracle from these
// numbers, never from gpuscale's output.
#include <map>
#include <string>

namespace gpuscale_emu {

struct GpuModel {
  std::string key;   // "h100-sxm", "h200", "h100-pcie" (GPUSCALE_EMU_GPU)
  std::string name;  // the CUDA device name, as cudaGetDeviceProperties reports it
  int cc_major = 9, cc_minor = 0;
  int sm_count = 132;
  unsigned long long memory_bytes = 0;
  double hbm_gbps = 0;            // peak, 1e9 bytes/s
  double hbm_efficiency = 0.9;    // of hbm_gbps reached by a streaming kernel
  std::map<std::string, double> tflops;  // dense peak per element type ("fp64", "bf16", ... as peaks/gpus.json)
  double gemm_efficiency = 0.8;   // of tflops reached by a large GEMM
  double nvlink_gbps = 0;         // per direction; 0: none
  double pcie_gbps = 0;           // per direction
  double nic_gbps = 50;           // per GPU per direction across hosts (a 400 Gb/s NIC per GPU)
  double nvlink_latency_us = 2, pcie_latency_us = 4, nic_latency_us = 5;
  double launch_overhead_us = 4;  // host time a kernel launch costs
  int max_threads_per_block = 1024, max_blocks_per_sm = 32, warp_size = 32;
  // Added for cudaGetDeviceProperties / cudaDeviceGetAttribute (gpu_model.cpp cites each figure).
  int sm_clock_mhz = 1980, mem_clock_mhz = 2619, memory_bus_width = 5120;
  int l2_bytes = 50 << 20;
  double link_efficiency = 0.9;   // of pcie_gbps / nvlink_gbps reached by a copy-engine copy
  double kernel_floor_us = 2;     // the shortest a kernel lasts on the GPU (cost.h)
  // Collectives (the emulated NCCL's ring model, tests/emulated_gpu/nccl/collective_model.h): the
  // fraction of the link's per-direction bandwidth a ring's bus bandwidth reaches inside a host
  // (NVLink, or PCIe without it) and across hosts (the NIC), and the lazy connection the first
  // operation on a communicator pays (stated assumptions, given there).
  double collective_nvlink_efficiency = 0.80, collective_nic_efficiency = 0.90;
  double collective_connect_us = 50000;
};

// The model named by key; throws std::invalid_argument with the known keys for another.
const GpuModel& gpu_model(const std::string& key);

}  // namespace gpuscale_emu
