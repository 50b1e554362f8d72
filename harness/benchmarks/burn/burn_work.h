#pragma once
// The work of a burn-in window (harness/benchmarks/burn/burn.cpp), sized per backend and plan: the sizes are
// recorded in each window's params, so a reader knows what ran.
#include <cstdint>

#include "core/dtype.h"
#include "harness/benchmark.h"

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

}  // namespace gpuscale
