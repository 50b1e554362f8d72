// STREAM arrays on the GPU: the vectorized kernels of stream_kernels.cu, one pass timed with CUDA
// events on the device's stream, the output copied back and checked against the random inputs
// (kernels/stream_verify.h).
#include <fmt/format.h>

#include "core/fault.h"
#include "kernels/cpu/host_buffer.h"
#include "kernels/cuda/cuda_internal.h"
#include "kernels/stream_verify.h"

namespace gpuscale::cuda {
namespace {

template <typename T>
constexpr int vector_width() {
  return 16 / static_cast<int>(sizeof(T));
}

template <typename T>
class CudaStreamArrays final : public StreamArrays {
 public:
  CudaStreamArrays(CudaContext& ctx, std::uint64_t n, std::uint64_t seed) : ctx_(ctx), n_(n), seed_(seed) {
    const std::uint64_t bytes = saturating_mul(n, sizeof(T));
    const int max_blocks = ctx.sm_count * 32;  // upper bound of any grid below (32 blocks/SM at most)
    require_memory(fmt::format("STREAM {}: 3 arrays of {}", sizeof(T) == 8 ? "fp64" : "fp32", format_bytes(bytes)),
                   saturating_mul(bytes, 3), ctx.ordinal);
    a_ = DeviceMemory(ctx.ordinal, bytes);
    b_ = DeviceMemory(ctx.ordinal, bytes);
    c_ = DeviceMemory(ctx.ordinal, bytes);
    partials_ = DeviceMemory(ctx.ordinal, sizeof(double) * static_cast<std::uint64_t>(max_blocks));
    for (const auto& k : kStreamKernels) {
      const int per_sm = std::min(stream_blocks_per_sm<T>(k.op, kStreamThreads), 32);
      if (per_sm <= 0)
        throw Error(fmt::format("the occupancy query for the STREAM {} kernel failed on GPU {}", k.name, ctx.ordinal),
                    kExitInvalidResult);
      launch_[static_cast<int>(k.op)] = {grid_blocks(ctx.sm_count, per_sm, kStreamThreads, n, vector_width<T>()),
                                         kStreamThreads};
    }
    check(stream_init<T>(a(), b(), c(), n, seed, helper_launch(ctx.ordinal, n), ctx.stream.get()), "stream_init launch");
    ctx.stream.synchronize();
  }

  double run(StreamOp op) override {
    const auto s = ctx_.stream.get();
    start_.record(s);
    check(stream_run<T>(op, a(), b(), c(), n_, partials_.as<double>(), launch_[static_cast<int>(op)], s),
          fmt::format("STREAM {} kernel launch", stream_spec(op).name));
    stop_.record(s);
    const double seconds = elapsed_seconds(start_, stop_);
    last_blocks_ = launch_[static_cast<int>(op)].blocks;
    inject_fault(op);
    return seconds;
  }

  CheckResult verify(StreamOp op) override {
    ctx_.stream.synchronize();
    if (stream_spec(op).output == kNoArray) {
      std::vector<double> partials(static_cast<std::size_t>(last_blocks_));
      check(cudaMemcpyAsync(partials.data(), partials_.get(), partials.size() * sizeof(double),
                            cudaMemcpyDeviceToHost, ctx_.stream.get()),
            "cudaMemcpyAsync");
      ctx_.stream.synchronize();
      long double sum = 0;
      for (double p : partials) sum += p;
      double got = static_cast<double>(sum);
      if (wrong_sum_) got *= 1.01;
      return verify_stream_sum<T>(op, got, n_, seed_);
    }
    HostBuffer<T> out(n_);
    check(cudaMemcpyAsync(out.data(), output(op), n_ * sizeof(T), cudaMemcpyDeviceToHost, ctx_.stream.get()),
          "cudaMemcpyAsync");
    ctx_.stream.synchronize();
    return verify_stream_elements<T>(op, out.data(), n_, seed_);
  }

 private:
  T* a() { return a_.as<T>(); }
  T* b() { return b_.as<T>(); }
  T* c() { return c_.as<T>(); }
  // The array an elementwise op writes (kernels/stream_table.h).
  T* output(StreamOp op) {
    const StreamArray out = stream_spec(op).output;
    return out == kArrayA ? a() : out == kArrayB ? b() : c();
  }

  // Test-only: really corrupt the output (one element, or the sum) so tests can prove it is caught.
  void inject_fault(StreamOp op) {
    if (!fault_injected(fmt::format("wrong:stream.{}", stream_spec(op).name))) return;
    if (stream_spec(op).output == kNoArray) {
      wrong_sum_ = true;
      return;
    }
    T* p = output(op) + n_ / 2;
    T v{};
    // On the context's stream, so the write is ordered after the timed kernel and before the next one.
    const auto s = ctx_.stream.get();
    check(cudaMemcpyAsync(&v, p, sizeof(T), cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync");
    ctx_.stream.synchronize();
    v += T(1);
    check(cudaMemcpyAsync(p, &v, sizeof(T), cudaMemcpyHostToDevice, s), "cudaMemcpyAsync");
    ctx_.stream.synchronize();
  }

  CudaContext& ctx_;
  std::uint64_t n_, seed_;
  DeviceMemory a_, b_, c_, partials_;
  StreamLaunch launch_[kStreamKernels.size()] = {};
  Event start_, stop_;
  int last_blocks_ = 0;
  bool wrong_sum_ = false;
};

}  // namespace

std::unique_ptr<StreamArrays> make_cuda_stream(CudaContext& ctx, DType type, std::uint64_t elements,
                                               std::uint64_t seed) {
  switch (type) {
    case DType::fp64: return std::make_unique<CudaStreamArrays<double>>(ctx, elements, seed);
    case DType::fp32: return std::make_unique<CudaStreamArrays<float>>(ctx, elements, seed);
    default: throw Error(fmt::format("the CUDA backend has no STREAM kernels for {}", dtype_name(type)));
  }
}

}  // namespace gpuscale::cuda
