#pragma once
// The CPU backend's device: OpenMP STREAM kernels over host arrays and BLAS GEMM (fp64, fp32).
// One MPI rank owns one "device": its share of the node's cores.
#include <memory>

#include "kernels/cpu/cpu_topology.h"
#include "kernels/device.h"

namespace gpuscale {

struct CpuDeviceOptions {
  int threads = 0;        // 0: default_threads_per_rank
  int ranks_on_node = 1;  // ranks sharing this node's cores, caches and memory
};

std::unique_ptr<Device> make_cpu_device(const CpuDeviceOptions& opts);

// The BLAS library's own description (e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ... Haswell").
std::string blas_description();

}  // namespace gpuscale
