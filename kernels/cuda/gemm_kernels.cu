#include "kernels/cuda/gemm_kernels.cuh"

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

template <typename TI>
cudaError_t gather_in(const GemmGather& g, StreamLaunch l, cudaStream_t s) {
  switch (g.out_type) {
    case DType::fp64: gather_kernel<TI, double><<<l.blocks, l.threads, 0, s>>>(g); break;
    case DType::fp32: gather_kernel<TI, float><<<l.blocks, l.threads, 0, s>>>(g); break;
    case DType::bf16: gather_kernel<TI, __nv_bfloat16><<<l.blocks, l.threads, 0, s>>>(g); break;
    case DType::fp16: gather_kernel<TI, __half><<<l.blocks, l.threads, 0, s>>>(g); break;
    case DType::int32: gather_kernel<TI, std::int32_t><<<l.blocks, l.threads, 0, s>>>(g); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t gemm_fill(DType type, void* p, std::uint64_t n, std::uint64_t seed, GemmMatrix which, StreamLaunch l,
                      cudaStream_t s) {
  switch (type) {
    case DType::fp64: fill_kernel<<<l.blocks, l.threads, 0, s>>>(static_cast<double*>(p), n, seed, which, false); break;
    case DType::fp32:
    case DType::tf32: fill_kernel<<<l.blocks, l.threads, 0, s>>>(static_cast<float*>(p), n, seed, which, false); break;
    case DType::bf16:
      fill_kernel<<<l.blocks, l.threads, 0, s>>>(static_cast<__nv_bfloat16*>(p), n, seed, which, false);
      break;
    case DType::fp16: fill_kernel<<<l.blocks, l.threads, 0, s>>>(static_cast<__half*>(p), n, seed, which, false); break;
    case DType::fp8_e4m3:
      fill_kernel<<<l.blocks, l.threads, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n, seed, which, false);
      break;
    case DType::int8: fill_kernel<<<l.blocks, l.threads, 0, s>>>(static_cast<std::int8_t*>(p), n, seed, which, true); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t gemm_gather(const GemmGather& g, StreamLaunch l, cudaStream_t s) {
  switch (g.in_type) {
    case DType::fp64: return gather_in<double>(g, l, s);
    case DType::fp32:
    case DType::tf32: return gather_in<float>(g, l, s);
    case DType::bf16: return gather_in<__nv_bfloat16>(g, l, s);
    case DType::fp16: return gather_in<__half>(g, l, s);
    case DType::fp8_e4m3: return gather_in<__nv_fp8_e4m3>(g, l, s);
    case DType::int8: return gather_in<std::int8_t>(g, l, s);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t gemm_corrupt(DType out_type, void* c, std::uint64_t index, cudaStream_t s) {
  switch (out_type) {
    case DType::fp64: corrupt_kernel<<<1, 1, 0, s>>>(static_cast<double*>(c), index); break;
    case DType::fp32: corrupt_kernel<<<1, 1, 0, s>>>(static_cast<float*>(c), index); break;
    case DType::bf16: corrupt_kernel<<<1, 1, 0, s>>>(static_cast<__nv_bfloat16*>(c), index); break;
    case DType::fp16: corrupt_kernel<<<1, 1, 0, s>>>(static_cast<__half*>(c), index); break;
    case DType::int32: corrupt_kernel<<<1, 1, 0, s>>>(static_cast<std::int32_t*>(c), index); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace gpuscale::cuda
