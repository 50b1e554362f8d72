#pragma once
// The CUDA STREAM kernels' device code: 16-byte vector loads and stores, grid-stride loops, a scalar
// tail for sizes that are not a multiple of the vector width. dot and read reduce in double per
// thread, then per block. No launches and no host API here, so the emulated GPU's tests compile this
// same source for the host (tests/emulated_gpu/kernels); the launches are in stream_kernels.cu. A named
// namespace, not an anonymous one, so nvcc's and a host compiler's mangled names agree.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/stream_table.h"

namespace gpuscale::cuda::device_code {

template <typename T>
struct Vec;
template <>
struct Vec<float> {
  using type = float4;
  static constexpr int width = 4;
};
template <>
struct Vec<double> {
  using type = double2;
  static constexpr int width = 2;
};
template <>
struct Vec<std::uint32_t> {  // raw words: the SM-driven copy of the copy benchmarks
  using type = uint4;
  static constexpr int width = 4;
};

template <typename T>
__global__ void init_kernel(T* a, T* b, T* c, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    a[i] = static_cast<T>(stream_input_value(seed, kArrayA, i));
    b[i] = static_cast<T>(stream_input_value(seed, kArrayB, i));
    c[i] = static_cast<T>(stream_input_value(seed, kArrayC, i));
  }
}

// Loads in flight per thread: each thread issues kUnroll independent 16-byte loads per array before it
// uses any of them, so enough bytes are in flight to cover HBM latency at full bandwidth.
constexpr int kUnroll = 4;

// out = f(x, y) elementwise with vector accesses; f gets scalars. y may be null (f then gets x twice).
template <typename T, typename F>
__global__ void binary_kernel(T* __restrict__ out, const T* __restrict__ x, const T* __restrict__ y, std::uint64_t n,
                              F f) {
  using V = typename Vec<T>::type;
  constexpr int W = Vec<T>::width;
  const std::uint64_t nv = n / W;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  V* vo = reinterpret_cast<V*>(out);
  const V* vx = reinterpret_cast<const V*>(x);
  const V* vy = reinterpret_cast<const V*>(y);
  auto apply = [&](const V& a, const V& b) {
    const T* pa = reinterpret_cast<const T*>(&a);
    const T* pb = reinterpret_cast<const T*>(&b);
    V r;
    T* pr = reinterpret_cast<T*>(&r);
#pragma unroll
    for (int l = 0; l < W; ++l) pr[l] = f(pa[l], pb[l]);
    return r;
  };
  std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < nv; i += kUnroll * stride) {
    V a[kUnroll], b[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) a[u] = vx[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) b[u] = y ? vy[i + u * stride] : a[u];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) vo[i + u * stride] = apply(a[u], b[u]);
  }
  for (; i < nv; i += stride) vo[i] = apply(vx[i], y ? vy[i] : vx[i]);
  for (std::uint64_t j = nv * W + blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; j < n; j += stride)
    out[j] = f(x[j], y ? y[j] : x[j]);
}

template <typename T>
__global__ void write_kernel(T* __restrict__ out, std::uint64_t n, T value) {
  using V = typename Vec<T>::type;
  constexpr int W = Vec<T>::width;
  const std::uint64_t nv = n / W;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  V v;
  T* pv = reinterpret_cast<T*>(&v);
#pragma unroll
  for (int i = 0; i < W; ++i) pv[i] = value;
  V* vo = reinterpret_cast<V*>(out);
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < nv; i += stride) vo[i] = v;
  for (std::uint64_t i = nv * W + blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    out[i] = value;
}

// sum over i of x[i] * (y ? y[i] : 1), one double per block. It synchronises its block, so the
// emulated GPU runs a hand-written twin of it (tests/emulated_gpu/kernels/stream_sum_twin.cpp): a change
// to its order of summation goes there too.
template <typename T>
__global__ void sum_kernel(const T* __restrict__ x, const T* __restrict__ y, std::uint64_t n, double* partials) {
  using V = typename Vec<T>::type;
  constexpr int W = Vec<T>::width;
  const std::uint64_t nv = n / W;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const V* vx = reinterpret_cast<const V*>(x);
  const V* vy = reinterpret_cast<const V*>(y);
  auto add = [&](const V& a, const V* b) {
    const T* pa = reinterpret_cast<const T*>(&a);
    const T* pb = reinterpret_cast<const T*>(b);
    double s = 0;
#pragma unroll
    for (int l = 0; l < W; ++l) s += static_cast<double>(pa[l]) * (b ? static_cast<double>(pb[l]) : 1.0);
    return s;
  };
  double acc = 0;
  std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < nv; i += kUnroll * stride) {
    V a[kUnroll], b[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) a[u] = vx[i + u * stride];
    if (y) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) b[u] = vy[i + u * stride];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc += add(a[u], y ? &b[u] : nullptr);
  }
  for (; i < nv; i += stride) {
    const V b = y ? vy[i] : V{};
    acc += add(vx[i], y ? &b : nullptr);
  }
  for (std::uint64_t j = nv * W + blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; j < n; j += stride)
    acc += static_cast<double>(x[j]) * (y ? static_cast<double>(y[j]) : 1.0);
  // Block reduction: warp shuffles, then one value per warp through shared memory.
  for (int off = 16; off > 0; off /= 2) acc += __shfl_down_sync(0xffffffffu, acc, off);
  __shared__ double warp_sums[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < static_cast<int>((blockDim.x + 31) / 32) ? warp_sums[lane] : 0.0;
    for (int off = 16; off > 0; off /= 2) acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (lane == 0) partials[blockIdx.x] = acc;
  }
}

template <typename T>
struct Copy {
  __device__ T operator()(T x, T) const { return x; }
};
template <typename T>
struct Scale {
  T s;
  __device__ T operator()(T x, T) const { return s * x; }
};
template <typename T>
struct Add {
  __device__ T operator()(T x, T y) const { return x + y; }
};
template <typename T>
struct Triad {
  T s;
  __device__ T operator()(T b, T c) const { return b + s * c; }
};

}  // namespace gpuscale::cuda::device_code
