// Launches of the CUDA STREAM kernels (their device code: stream_kernels_device.cuh).
#include "kernels/cuda/stream_kernels.cuh"
#include "kernels/cuda/stream_kernels_device.cuh"

namespace gpuscale::cuda {

using device_code::Add;
using device_code::binary_kernel;
using device_code::Copy;
using device_code::init_kernel;
using device_code::Scale;
using device_code::sum_kernel;
using device_code::Triad;
using device_code::write_kernel;

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
