#pragma once
// Analytic check of a STREAM kernel's output, shared by every backend (the CUDA backend copies the
// output array to the host first). The inputs are regenerated from the seed, so the check needs no
// copy of them; every element is checked.
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "core/dtype.h"
#include "kernels/device.h"
#include "kernels/stream_table.h"

namespace gpuscale {

template <typename T>
struct StreamInputs {
  std::uint64_t seed;
  T a(std::uint64_t i) const { return static_cast<T>(stream_input_value(seed, kArrayA, i)); }
  T b(std::uint64_t i) const { return static_cast<T>(stream_input_value(seed, kArrayB, i)); }
  T c(std::uint64_t i) const { return static_cast<T>(stream_input_value(seed, kArrayC, i)); }
};

// Expected value of element i of the op's output array, computed in T as the kernel does.
template <typename T>
T stream_expected_element(StreamOp op, const StreamInputs<T>& in, std::uint64_t i) {
  return stream_formula<T>(op, in.a(i), in.b(i), in.c(i));
}

// Elementwise ops: `out` is the op's output array (StreamKernelSpec::output).
// Tolerance: two units of roundoff of the value (a fused multiply-add in triad rounds once instead of
// twice); any larger difference is a wrong value.
template <typename T>
CheckResult verify_stream_elements(StreamOp op, const T* out, std::uint64_t n, std::uint64_t seed) {
  const double tol = 2.0 * dtype_epsilon(sizeof(T) == 8 ? DType::fp64 : DType::fp32);
  const StreamInputs<T> in{seed};
  std::uint64_t wrong = 0;
  std::uint64_t first_bad = n;
  double worst = 0;
#pragma omp parallel for reduction(+ : wrong) reduction(min : first_bad) reduction(max : worst) schedule(static)
  for (std::uint64_t i = 0; i < n; ++i) {
    const double expect = static_cast<double>(stream_expected_element(op, in, i));
    const double err = std::fabs(static_cast<double>(out[i]) - expect) / std::fabs(expect);
    if (!(err <= tol)) {  // also catches NaN
      ++wrong;
      if (i < first_bad) first_bad = i;
    }
    if (err > worst || err != err) worst = err != err ? INFINITY : err;
  }
  CheckResult r{n, wrong, worst / tol, ""};
  if (wrong > 0)
    r.detail = fmt::format("{} of {} elements wrong; first at [{}]: got {}, expected {}", wrong, n, first_bad,
                           static_cast<double>(out[first_bad]),
                           static_cast<double>(stream_expected_element(op, in, first_bad)));
  return r;
}

// Reductions (dot, read): compares the kernel's sum with one computed in long double. The tolerance
// allows the rounding of a parallel sum in T: 2 sqrt(n) units of roundoff of the sum of magnitudes.
template <typename T>
CheckResult verify_stream_sum(StreamOp op, double got, std::uint64_t n, std::uint64_t seed) {
  const StreamInputs<T> in{seed};
  long double sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
  for (std::uint64_t i = 0; i < n; ++i) {
    sum += stream_formula<long double>(op, in.a(i), in.b(i), in.c(i));
  }
  // All terms are positive (inputs in [0.5, 1.5)), so the sum is also the sum of magnitudes.
  const double expect = static_cast<double>(sum);
  const double tol = 2.0 * std::sqrt(static_cast<double>(n)) * dtype_epsilon(sizeof(T) == 8 ? DType::fp64 : DType::fp32);
  const double err = std::fabs(got - expect) / expect;
  CheckResult r{1, (err <= tol) ? 0u : 1u, err / tol, ""};
  if (r.wrong) r.detail = fmt::format("sum {} differs from the exact {} by {:.3g} (tolerance {:.3g})", got, expect, err, tol);
  return r;
}

}  // namespace gpuscale
