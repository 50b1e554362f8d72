#include "kernels/cuda/gemm_kernels.cuh"

#include <type_traits>

#include "kernels/cuda/device_types.cuh"

namespace gpuscale::cuda {
namespace {

template <typename T>
__global__ void fill_kernel(T* p, std::uint64_t n, std::uint64_t seed, GemmMatrix which, bool integer) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    p[i] = from_double<T>(gemm_input_value(seed, which, i, integer));
}

template <typename TI, typename TO>
__global__ void gather_kernel(GemmGather g) {
  const TI* a = static_cast<const TI*>(g.a);
  const TI* b = static_cast<const TI*>(g.b);
  const TO* c = static_cast<const TO*>(g.c);
  const std::uint64_t total = static_cast<std::uint64_t>(g.count) * g.k;
  for (std::uint64_t t = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t s = t / g.k, p = t % g.k;
    const std::uint64_t i = g.rows[s], j = g.cols[s];
    // Column-major storage: A is m x k (lda m), or k x m (lda k) when transposed; B likewise.
    g.a_out[t] = to_double(g.trans_a ? a[p + i * g.k] : a[i + p * g.m]);
    g.b_out[t] = to_double(g.trans_b ? b[j + p * g.n] : b[p + j * g.k]);
    if (p == 0) g.c_out[s] = to_double(c[i + j * g.m]);
  }
}

template <typename T>
__global__ void corrupt_kernel(T* c, std::uint64_t index) {
  c[index] = from_double<T>(to_double(c[index]) + 1.0);
}

}  // namespace

// Each entry point dispatches on the storage type (device_types.cuh), so a GEMM dtype with a storage
// type there needs nothing here.
cudaError_t gemm_fill(DType type, void* p, std::uint64_t n, std::uint64_t seed, GemmMatrix which, StreamLaunch l,
                      cudaStream_t s) {
  return with_storage_type(type, [&](auto tag) {
    using T = decltype(tag);
    fill_kernel<<<l.blocks, l.threads, 0, s>>>(static_cast<T*>(p), n, seed, which, std::is_integral_v<T>);
    return cudaGetLastError();
  });
}

cudaError_t gemm_gather(const GemmGather& g, StreamLaunch l, cudaStream_t s) {
  return with_storage_type(g.in_type, [&](auto in) {
    return with_storage_type(g.out_type, [&](auto out) {
      gather_kernel<decltype(in), decltype(out)><<<l.blocks, l.threads, 0, s>>>(g);
      return cudaGetLastError();
    });
  });
}

cudaError_t gemm_corrupt(DType out_type, void* c, std::uint64_t index, cudaStream_t s) {
  return with_storage_type(out_type, [&](auto tag) {
    corrupt_kernel<<<1, 1, 0, s>>>(static_cast<decltype(tag)*>(c), index);
    return cudaGetLastError();
  });
}

}  // namespace gpuscale::cuda
