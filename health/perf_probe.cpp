#include "health/perf_probe.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "core/stats.h"
#include "core/units.h"

namespace gpuscale::health {
namespace {

// Warm-up, then repetitions of `pass` (seconds each) until `reps` or the time budget is spent.
std::vector<double> time_passes(const PerfOptions& o, const std::function<double()>& pass) {
  double spent = 0;
  for (int i = 0; i < o.warmup; ++i) spent += pass();
  std::vector<double> seconds;
  for (int i = 0; i < std::max(1, o.reps); ++i) {
    seconds.push_back(pass());
    spent += seconds.back();
    if (spent > o.max_seconds && seconds.size() >= 3) break;
  }
  return seconds;
}

PerfResult bandwidth(Device& d, const PeakTable* peaks, const PerfOptions& o, std::uint64_t seed) {
  PerfResult r;
  r.check = "memory_bandwidth";
  r.unit = "GB/s";
  const auto types = d.stream_dtypes();
  if (types.empty()) {
    r.ran = false;
    r.error = "the device has no STREAM kernels";
    return r;
  }
  const DType type = std::find(types.begin(), types.end(), DType::fp64) != types.end() ? DType::fp64 : types.front();
  const std::uint64_t bytes = o.array_bytes ? o.array_bytes : std::min<std::uint64_t>(d.default_stream_array_bytes(), 1ULL << 30);
  const std::uint64_t n = std::max<std::uint64_t>(1, bytes / dtype_size(type));
  r.what = fmt::format("stream.triad {} {}", dtype_name(type), format_size(n * dtype_size(type)));
  const auto peak = peaks ? peaks->memory_bandwidth(d.info()) : ExpectedPeak{std::nullopt, "no peaks table"};
  r.peak = peak.value;
  r.peak_source = peak.source;
  try {
    auto arrays = d.make_stream(type, n, seed);
    const double moved = static_cast<double>(stream_bytes(StreamOp::triad, n, dtype_size(type)));
    const auto s = time_passes(o, [&] { return arrays->run(StreamOp::triad); });
    r.value = moved / median_of(s) / 1e9;
    const auto check = arrays->verify(StreamOp::triad);
    r.valid = check.wrong == 0;
    if (!r.valid) r.error = "verification failed: " + check.detail;
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

PerfResult gemm(Device& d, const PeakTable* peaks, const PerfOptions& o, std::uint64_t seed) {
  PerfResult r;
  r.check = "gemm";
  r.unit = "TFLOP/s";
  std::optional<DType> type;
  const auto types = d.gemm_dtypes();
  for (DType t : {DType::bf16, DType::fp32})
    if (std::find(types.begin(), types.end(), t) != types.end() && !d.gemm_unsupported(t)) {
      type = t;
      break;
    }
  if (!type)
    for (DType t : types)
      if (!d.gemm_unsupported(t)) {
        type = t;
        break;
      }
  if (!type) {
    r.ran = false;
    r.error = "the device runs no GEMM type";
    return r;
  }
  r.what = fmt::format("gemm {} {}", dtype_name(*type), format_gemm_shape(o.gemm_shape));
  const auto peak = peaks ? peaks->compute(d.info(), *type) : ExpectedPeak{std::nullopt, "no peaks table"};
  r.peak = peak.value;
  r.peak_source = peak.source;
  try {
    auto problem = d.make_gemm(*type, o.gemm_shape, seed);
    const auto s = time_passes(o, [&] { return problem->run(); });
    r.value = gemm_flops(o.gemm_shape) / median_of(s) / 1e12;
    const auto check = problem->verify();
    r.valid = check.wrong == 0;
    if (!r.valid) r.error = "verification failed: " + check.detail;
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace

std::vector<PerfResult> run_perf_checks(Device& device, const PeakTable* peaks, const PerfOptions& opts,
                                        std::uint64_t seed) {
  return {bandwidth(device, peaks, opts, seed), gemm(device, peaks, opts, seed)};
}

}  // namespace gpuscale::health
