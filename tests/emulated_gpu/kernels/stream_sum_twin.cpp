// The hand-written twin of sum_kernel (kernels/cuda/stream_kernels_device.cuh), the STREAM dot and read
// reduction. It is a twin, not the kernel compiled for the host, because the kernel synchronises its
// block: warp shuffles (__shfl_down_sync) and a __syncthreads between the warps' sums in shared memory
// and the first warp's final sum, which a runner of one thread at a time cannot honour. The twin does
// the same arithmetic in the same order, since the order decides the rounding of the result: each
// thread's double sum over its grid-stride elements (kUnroll vectors at a time, lanes summed first),
// then the shuffle tree of each warp (lane i adds lane i + offset, offsets 16, 8, 4, 2, 1), then the
// first warp's tree over the warps' sums, into partials[blockIdx.x].
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

// First: the device code below needs the execution model it gives the host.
#include "tests/emulated_gpu/kernels/kernel_runner.h"

#include "kernels/cuda/stream_kernels_device.cuh"

namespace gpuscale_emu::twins {
namespace {

namespace dc = gpuscale::cuda::device_code;
constexpr unsigned kWarp = 32;

// x[i] * (y ? y[i] : 1) in double, added to s as the kernel's s += a * b. nvcc contracts that multiply
// and add into one fused multiply-add (its default, --fmad=true; CUDA C++ Best Practices Guide,
// "Floating Point Math"), so the twin rounds once, as the GPU does.
inline double add_term(double s, double x, const double* y) { return std::fma(x, y ? *y : 1.0, s); }

// The kernel's per-thread accumulation for thread `t` of `threads` in block `b` of `blocks`.
template <typename T>
double thread_sum(const T* x, const T* y, std::uint64_t n, std::uint64_t b, std::uint64_t t, std::uint64_t blocks,
                  std::uint64_t threads) {
  constexpr int W = dc::Vec<T>::width;
  constexpr int U = dc::kUnroll;
  const std::uint64_t nv = n / W, stride = blocks * threads;
  // One vector's lanes, summed from 0 as the kernel's `add` does.
  auto vector_sum = [&](std::uint64_t v) {
    double s = 0;
    for (int l = 0; l < W; ++l) {
      const double yl = y ? static_cast<double>(y[v * W + l]) : 0;
      s = add_term(s, static_cast<double>(x[v * W + l]), y ? &yl : nullptr);
    }
    return s;
  };
  double acc = 0;
  std::uint64_t i = b * threads + t;
  for (; i + (U - 1) * stride < nv; i += U * stride)
    for (int u = 0; u < U; ++u) acc += vector_sum(i + u * stride);
  for (; i < nv; i += stride) acc += vector_sum(i);
  for (std::uint64_t j = nv * W + b * threads + t; j < n; j += stride) {
    const double yj = y ? static_cast<double>(y[j]) : 0;
    acc = add_term(acc, static_cast<double>(x[j]), y ? &yj : nullptr);
  }
  return acc;
}

// for (off = 16; off > 0; off /= 2) v += __shfl_down_sync(full mask, v, off): lane i reads lane
// i + off, or its own value where i + off is past the warp (CUDA C Programming Guide, "Warp Shuffle
// Functions"). Returns lane 0's value.
double warp_tree(std::array<double, kWarp> v) {
  for (unsigned off = kWarp / 2; off > 0; off /= 2) {
    const std::array<double, kWarp> before = v;
    for (unsigned lane = 0; lane < kWarp; ++lane) v[lane] += lane + off < kWarp ? before[lane + off] : before[lane];
  }
  return v[0];
}

template <typename T>
void run_sum(const LaunchShape& s, void** args) {
  const T* x = arg<const T*>(args, 0);
  const T* y = arg<const T*>(args, 1);
  const std::uint64_t n = arg<std::uint64_t>(args, 2);
  double* partials = arg<double*>(args, 3);
  const unsigned threads = s.block[0];
  // The kernel indexes x only and shuffles with a full mask, which needs whole warps (a missing lane is
  // undefined behaviour on the GPU): every launch is 1-D with 256 threads. Anything else is refused
  // loudly rather than given a made-up answer.
  if (threads == 0 || threads % kWarp != 0 || threads > kWarp * kWarp || s.block[1] != 1 || s.block[2] != 1 ||
      s.grid[1] != 1 || s.grid[2] != 1) {
    std::fprintf(stderr, "emulated GPU: sum_kernel launched as <<<(%u,%u,%u),(%u,%u,%u)>>>: its twin needs a 1-D "
                 "launch of whole warps\n", s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2]);
    std::abort();
  }
  const unsigned warps = threads / kWarp;
  for (unsigned b = 0; b < s.grid[0]; ++b) {
    std::array<double, kWarp> warp_sums{};  // the kernel's __shared__ double warp_sums[32]
    for (unsigned w = 0; w < warps; ++w) {
      std::array<double, kWarp> lanes{};
      for (unsigned lane = 0; lane < kWarp; ++lane) lanes[lane] = thread_sum(x, y, n, b, w * kWarp + lane, s.grid[0], threads);
      warp_sums[w] = warp_tree(lanes);
    }
    // The first warp: lanes past the number of warps read 0.
    std::array<double, kWarp> first{};
    for (unsigned lane = 0; lane < warps; ++lane) first[lane] = warp_sums[lane];
    partials[b] = warp_tree(first);
  }
}

// sum_kernel(x, y, n, partials): reads x, y when given, and writes one double per block.
template <typename T>
double sum_bytes(const LaunchShape& s, void** args) {
  const double arrays = arg<const T*>(args, 1) != nullptr ? 2 : 1;
  return arrays * static_cast<double>(arg<std::uint64_t>(args, 2)) * sizeof(T) + double(s.grid[0]) * sizeof(double);
}

template <typename T>
TwinEntry sum_twin() {
  // The kernel's own instantiation is taken only for its address, hence its name; it never runs here.
  return {reinterpret_cast<const void*>(&dc::sum_kernel<T>), KernelTwin{nullptr, &run_sum<T>, &sum_bytes<T>}};
}

}  // namespace

void add_stream_sum_twins(std::vector<TwinEntry>& table) {
  table.push_back(sum_twin<float>());
  table.push_back(sum_twin<double>());
}

}  // namespace gpuscale_emu::twins
