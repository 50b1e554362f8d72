#pragma once
// The work of a burn-in window (harness/benchmarks/burn/burn.cpp), sized per backend and plan: the sizes are
// recorded in each window's params, so a reader knows what ran.
#include <cstdint>
#include <functional>

#include "core/dtype.h"
#include "harness/benchmark.h"
#include "kernels/gemm_spec.h"

namespace gpuscale {

// The work of a window, sized per backend: on CUDA a GEMM that keeps the tensor cores busy (the most
// power and heat), STREAM arrays of the device's default size, an all_reduce of 256 MiB; on the CPU
// backend sizes whose one pass stays well under a slice of the default window on a shared core.
struct BurnWork {
  DType gemm_dtype = DType::fp64;
  std::uint64_t gemm_n = 1024;
  DType stream_dtype = DType::fp64;
  std::uint64_t stream_elements = 0;
  std::uint64_t all_reduce_bytes = 0;
};

BurnWork burn_work(const PlanContext& ctx);

// The square GEMM of a burn-in window at `type`: n x n x n in the layout the gemm benchmark gives that
// type, and the library's first algorithm (GemmShape::fixed_algorithm), so outputs compare bit for bit.
GemmShape burn_gemm_shape(DType type, std::uint64_t n);

// How many all_reduces an all_reduce window times in one batch: a tenth of a slice at the slowest
// rank's seconds per operation, 1 ... 1e5. `timed(iters)` runs iters operations and returns the seconds
// of one; `slowest(v)` is the group's largest v (every rank calls it, a collective). One operation runs
// untimed first: NCCL connects a communicator's peers lazily on its first operation, seconds that
// would size the batch to 1 if they were timed.
int all_reduce_batch(double slice_s, const std::function<double(int)>& timed, const std::function<double(double)>& slowest);

}  // namespace gpuscale
