// OpenMP STREAM kernels over host arrays. Every loop uses the same static schedule as the first-touch
// initialisation, so each thread streams through the pages it placed.
#include <omp.h>

#include <chrono>

#include "core/fault.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/host_buffer.h"
#include "kernels/stream_verify.h"

namespace gpuscale {
namespace {

template <typename T>
class CpuStreamArrays final : public StreamArrays {
 public:
  CpuStreamArrays(std::uint64_t n, std::uint64_t seed) : n_(n), seed_(seed), a_(n), b_(n), c_(n) {
    T* a = a_.data();
    T* b = b_.data();
    T* c = c_.data();
#pragma omp parallel for schedule(static)
    for (std::uint64_t i = 0; i < n; ++i) {
      a[i] = static_cast<T>(stream_input_value(seed, kArrayA, i));
      b[i] = static_cast<T>(stream_input_value(seed, kArrayB, i));
      c[i] = static_cast<T>(stream_input_value(seed, kArrayC, i));
    }
  }

  double run(StreamOp op) override {
    T* __restrict a = a_.data();
    T* __restrict b = b_.data();
    T* __restrict c = c_.data();
    const T s = static_cast<T>(kStreamScalar);
    const std::uint64_t n = n_;
    double sum = 0;  // fp32 sums accumulate in double: the bytes read are the same, the answer exact
    auto t0 = std::chrono::steady_clock::now();
    switch (op) {
      case StreamOp::copy:
#pragma omp parallel for simd schedule(static)
        for (std::uint64_t i = 0; i < n; ++i) c[i] = a[i];
        break;
      case StreamOp::scale:
#pragma omp parallel for simd schedule(static)
        for (std::uint64_t i = 0; i < n; ++i) b[i] = s * c[i];
        break;
      case StreamOp::add:
#pragma omp parallel for simd schedule(static)
        for (std::uint64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
        break;
      case StreamOp::triad:
#pragma omp parallel for simd schedule(static)
        for (std::uint64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
        break;
      case StreamOp::dot:
#pragma omp parallel for simd schedule(static) reduction(+ : sum)
        for (std::uint64_t i = 0; i < n; ++i) sum += static_cast<double>(a[i]) * static_cast<double>(b[i]);
        break;
      case StreamOp::read:
#pragma omp parallel for simd schedule(static) reduction(+ : sum)
        for (std::uint64_t i = 0; i < n; ++i) sum += static_cast<double>(a[i]);
        break;
      case StreamOp::write:
#pragma omp parallel for simd schedule(static)
        for (std::uint64_t i = 0; i < n; ++i) a[i] = s;
        break;
    }
    auto t1 = std::chrono::steady_clock::now();
    last_sum_ = sum;
    inject_fault(op);
    return std::chrono::duration<double>(t1 - t0).count();
  }

  CheckResult verify(StreamOp op) override {
    const StreamArray out = stream_spec(op).output;
    if (out == kNoArray) return verify_stream_sum<T>(op, last_sum_, n_, seed_);
    return verify_stream_elements<T>(op, array(out), n_, seed_);
  }

 private:
  T* array(StreamArray which) { return which == kArrayA ? a_.data() : which == kArrayB ? b_.data() : c_.data(); }

  // Test-only: make the kernel's output really wrong (one element, or the sum), so the tests can
  // prove verification reports it.
  void inject_fault(StreamOp op) {
    if (!fault_injected(fmt::format("wrong:stream.{}", stream_spec(op).name))) return;
    const StreamArray out = stream_spec(op).output;
    if (out == kNoArray)
      last_sum_ *= 1.01;
    else
      array(out)[n_ / 2] += T(1);
  }

  std::uint64_t n_;
  std::uint64_t seed_;
  HostBuffer<T> a_, b_, c_;
  double last_sum_ = 0;
};

}  // namespace

std::vector<StreamOp> cpu_stream_ops() {
  return {StreamOp::copy, StreamOp::scale, StreamOp::add, StreamOp::triad, StreamOp::dot};
}

std::unique_ptr<StreamArrays> make_cpu_stream(DType type, std::uint64_t elements, std::uint64_t seed) {
  switch (type) {
    case DType::fp64: return std::make_unique<CpuStreamArrays<double>>(elements, seed);
    case DType::fp32: return std::make_unique<CpuStreamArrays<float>>(elements, seed);
    default: throw Error(fmt::format("the CPU backend has no STREAM kernels for {}", dtype_name(type)));
  }
}

}  // namespace gpuscale
