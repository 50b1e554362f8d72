#include "kernels/cuda/gemm_kernels.cuh"

#include <type_traits>

#include "kernels/cuda/device_types.cuh"
#include "kernels/cuda/gemm_kernels_device.cuh"

namespace gpuscale::cuda {

using device_code::corrupt_kernel;
using device_code::fill_kernel;
using device_code::gather_kernel;

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
