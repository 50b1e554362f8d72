#pragma once
// Device kernels around the NCCL collectives: inputs generated where they live (collective_input, as
// every rank computes it), the exact check of a result on the device (coll_expected, the host's own
// code), and the test-only fault.
#include <cuda_runtime.h>

#include <cstdint>

#include "collectives/collective_table.h"

namespace gpuscale::nccl {

struct KernelGrid {
  int blocks = 1;
  int threads = 256;
};

// p[i] = collective_input(seed, op, range, rank, i, nranks, contributors) in `type`, for i < n.
cudaError_t fill_inputs(DType type, void* p, std::uint64_t n, std::uint64_t seed, RedOp op, std::int64_t range,
                        int rank, int nranks, int contributors, KernelGrid g, cudaStream_t s);

// Adds the number of the n values of `result` that fail coll_value_ok against coll_expected(plan, i)
// to *wrong (device memory).
cudaError_t count_wrong(DType type, const void* result, std::uint64_t n, const CollCheckPlan& plan,
                        unsigned long long* wrong, KernelGrid g, cudaStream_t s);

// Test-only (GPUSCALE_TEST_FAULT=wrong:<collective>): element 0 becomes -1 if it was positive, else 1.
cudaError_t corrupt_first(DType type, void* p, cudaStream_t s);

}  // namespace gpuscale::nccl
