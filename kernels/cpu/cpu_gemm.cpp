// GEMM on the CPU through the C BLAS interface (dgemm, sgemm), column-major like cuBLAS.
#include <cblas.h>

#include <chrono>
#include <climits>

#include "core/fault.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/host_buffer.h"
#include "kernels/output_digest.h"

namespace gpuscale {
namespace {

template <typename T>
void blas_gemm(const GemmShape& s, const T* a, const T* b, T* c) {
  const auto ta = s.trans_a ? CblasTrans : CblasNoTrans;
  const auto tb = s.trans_b ? CblasTrans : CblasNoTrans;
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  const int lda = s.trans_a ? k : m;
  const int ldb = s.trans_b ? n : k;
  if constexpr (sizeof(T) == 8)
    cblas_dgemm(CblasColMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, m);
  else
    cblas_sgemm(CblasColMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, m);
}

template <typename T>
class CpuGemm final : public GemmProblem {
 public:
  CpuGemm(DType type, const GemmShape& s, std::uint64_t seed)
      : type_(type), s_(s), seed_(seed), a_(s.m * s.k), b_(s.k * s.n), c_(s.m * s.n) {
    fill(a_, kMatrixA);
    fill(b_, kMatrixB);
  }

  double run() override {
    auto t0 = std::chrono::steady_clock::now();
    blas_gemm<T>(s_, a_.data(), b_.data(), c_.data());
    auto t1 = std::chrono::steady_clock::now();
    if (fault_injected("wrong:gemm")) c_[(s_.m / 2) + (s_.n / 2) * s_.m] += T(1);
    return std::chrono::duration<double>(t1 - t0).count();
  }
  double run_one() override { return run(); }  // a call is one product here

  // The BLAS library and routine decide the bits (the same on every rank of a launch).
  OutputDigest output_digest() override {
    if (const auto pick = flip_bit_due()) flip_one_bit(c_.data(), c_.size(), sizeof(T), *pick);
    return {text_digest(details().dump()), c_.size(), block_digests(c_.data(), c_.size(), sizeof(T))};
  }

  std::vector<std::uint64_t> range_digests(std::uint64_t first, std::uint64_t last) override {
    return range_digests_of(c_.data(), c_.size(), sizeof(T), first, last);
  }

  CheckResult verify() override {
    CheckResult r;
    const std::uint64_t lda = s_.trans_a ? s_.k : s_.m;
    const std::uint64_t ldb = s_.trans_b ? s_.n : s_.k;
    // op(A)[i][p] and op(B)[p][j] in column-major storage.
    auto a_at = [&](std::uint64_t i, std::uint64_t p) { return s_.trans_a ? a_[p + i * lda] : a_[i + p * lda]; };
    auto b_at = [&](std::uint64_t p, std::uint64_t j) { return s_.trans_b ? b_[j + p * ldb] : b_[p + j * ldb]; };
    // Include the entry the fault switch corrupts, so a wrong GEMM cannot hide between samples.
    auto points = gemm_sample_points(s_, seed_, 60);
    points.emplace_back(s_.m / 2, s_.n / 2);
    for (auto [i, j] : points) {
      const double got = static_cast<double>(c_[i + j * s_.m]);
      auto e = check_gemm_entry(type_, s_.k, got, [&](std::uint64_t p) { return a_at(i, p); },
                                [&](std::uint64_t p) { return b_at(p, j); });
      ++r.checked;
      if (e.error_ratio > r.max_error) r.max_error = e.error_ratio;
      if (!e.ok) {
        if (r.wrong == 0) r.detail = fmt::format("C[{},{}] = {} is outside tolerance ({:.3g}x)", i, j, got, e.error_ratio);
        ++r.wrong;
      }
    }
    return r;
  }

  nlohmann::json details() const override { return {{"library", "cblas"}, {"routine", sizeof(T) == 8 ? "dgemm" : "sgemm"}}; }

 private:
  void fill(HostBuffer<T>& m, GemmMatrix which) {
    T* p = m.data();
    const std::uint64_t n = m.size();
    const std::uint64_t seed = seed_;
#pragma omp parallel for schedule(static)
    for (std::uint64_t i = 0; i < n; ++i) p[i] = static_cast<T>(gemm_input_value(seed, which, i, false));
  }

  DType type_;
  GemmShape s_;
  std::uint64_t seed_;
  HostBuffer<T> a_, b_, c_;
};

}  // namespace

std::unique_ptr<GemmProblem> make_cpu_gemm(DType type, const GemmShape& s, std::uint64_t seed) {
  // The C BLAS interface takes int dimensions; refuse what would overflow rather than wrap.
  const std::uint64_t biggest = std::max({s.m, s.n, s.k});
  if (biggest > static_cast<std::uint64_t>(INT_MAX))
    throw Error(fmt::format("GEMM {} exceeds the BLAS interface's 32-bit dimensions", format_gemm_shape(s)));
  switch (type) {
    case DType::fp64: return std::make_unique<CpuGemm<double>>(type, s, seed);
    case DType::fp32: return std::make_unique<CpuGemm<float>>(type, s, seed);
    default: throw Error(fmt::format("the CPU backend has no GEMM for {}", dtype_name(type)));
  }
}

}  // namespace gpuscale
