// CUDA STREAM kernels: 16-byte vector loads and stores, grid-stride loops, a scalar tail for sizes
// that are not a multiple of the vector width. dot and read reduce in double per thread, then per block.
#include "kernels/cuda/stream_kernels.cuh"

namespace gpuscale::cuda {
namespace {

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

// sum over i of x[i] * (y ? y[i] : 1), one double per block.
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
    acc = lane < (blockDim.x + 31) / 32 ? warp_sums[lane] : 0.0;
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

}  // namespace

template <typename T>
cudaError_t stream_init(T* a, T* b, T* c, std::uint64_t n, std::uint64_t seed, StreamLaunch l, cudaStream_t s) {
  init_kernel<T><<<l.blocks, l.threads, 0, s>>>(a, b, c, n, seed);
  return cudaGetLastError();
}

template <typename T>
cudaError_t stream_run(StreamOp op, T* a, T* b, T* c, std::uint64_t n, double* partials, StreamLaunch l,
                       cudaStream_t s) {
  const T scalar = static_cast<T>(kStreamScalar);
  switch (op) {
    case StreamOp::copy: binary_kernel<<<l.blocks, l.threads, 0, s>>>(c, a, static_cast<T*>(nullptr), n, Copy<T>{}); break;
    case StreamOp::scale: binary_kernel<<<l.blocks, l.threads, 0, s>>>(b, c, static_cast<T*>(nullptr), n, Scale<T>{scalar}); break;
    case StreamOp::add: binary_kernel<<<l.blocks, l.threads, 0, s>>>(c, a, b, n, Add<T>{}); break;
    case StreamOp::triad: binary_kernel<<<l.blocks, l.threads, 0, s>>>(a, b, c, n, Triad<T>{scalar}); break;
    case StreamOp::dot: sum_kernel<T><<<l.blocks, l.threads, 0, s>>>(a, b, n, partials); break;
    case StreamOp::read: sum_kernel<T><<<l.blocks, l.threads, 0, s>>>(a, static_cast<T*>(nullptr), n, partials); break;
    case StreamOp::write: write_kernel<T><<<l.blocks, l.threads, 0, s>>>(a, n, scalar); break;
  }
  return cudaGetLastError();
}

template <typename T>
int stream_blocks_per_sm(StreamOp op, int threads) {
  int blocks = 0;
  cudaError_t rc = cudaSuccess;
  switch (op) {
    case StreamOp::copy: rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, binary_kernel<T, Copy<T>>, threads, 0); break;
    case StreamOp::scale: rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, binary_kernel<T, Scale<T>>, threads, 0); break;
    case StreamOp::add: rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, binary_kernel<T, Add<T>>, threads, 0); break;
    case StreamOp::triad: rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, binary_kernel<T, Triad<T>>, threads, 0); break;
    case StreamOp::dot:
    case StreamOp::read: rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, sum_kernel<T>, threads, 0); break;
    case StreamOp::write: rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, write_kernel<T>, threads, 0); break;
  }
  return rc == cudaSuccess ? blocks : 0;
}

cudaError_t copy_words(std::uint32_t* dst, const std::uint32_t* src, std::uint64_t n, StreamLaunch l, cudaStream_t s) {
  binary_kernel<<<l.blocks, l.threads, 0, s>>>(dst, src, static_cast<const std::uint32_t*>(nullptr), n,
                                              Copy<std::uint32_t>{});
  return cudaGetLastError();
}

int copy_words_blocks_per_sm(int threads) {
  int blocks = 0;
  const auto rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, binary_kernel<std::uint32_t, Copy<std::uint32_t>>, threads, 0);
  return rc == cudaSuccess ? blocks : 0;
}

template cudaError_t stream_init<float>(float*, float*, float*, std::uint64_t, std::uint64_t, StreamLaunch, cudaStream_t);
template cudaError_t stream_init<double>(double*, double*, double*, std::uint64_t, std::uint64_t, StreamLaunch, cudaStream_t);
template cudaError_t stream_run<float>(StreamOp, float*, float*, float*, std::uint64_t, double*, StreamLaunch, cudaStream_t);
template cudaError_t stream_run<double>(StreamOp, double*, double*, double*, std::uint64_t, double*, StreamLaunch, cudaStream_t);
template int stream_blocks_per_sm<float>(StreamOp, int);
template int stream_blocks_per_sm<double>(StreamOp, int);

}  // namespace gpuscale::cuda
