// STREAM memory-bandwidth benchmarks: one registry entry per kernel of kernels/stream_table.h.
#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "core/units.h"
#include "harness/benchmarks/agreed_setup.h"
#include "harness/benchmarks/defaults.h"
#include "harness/benchmarks/independent.h"
#include "harness/registry.h"

namespace gpuscale {
namespace {

// A STREAM point: the element type and the elements per array.
struct StreamPoint {
  DType dtype;
  std::uint64_t elements;
};

BenchmarkInfo stream_info(const StreamKernelSpec& spec) {
  return {fmt::format("stream.{}", spec.name),
          "stream",
          fmt::format("STREAM {}: {}; {} arrays touched per element", spec.name, spec.formula,
                      spec.arrays_read + spec.arrays_written),
          "GB/s",
          Scope::independent,
          Efficiency::per_device,
          {{"dtype", "element type (--dtypes; default fp64,fp32, --quick fp64)"},
           {"array_bytes", "bytes per array (--array-size; default 4x the last-level cache, or 8x the GPU's L2 and at least 1G)"},
           {"elements", "elements per array"}},
          {"cpu", "cuda"}};
}

class StreamBenchmark final : public PointBenchmark<StreamPoint> {
 public:
  explicit StreamBenchmark(const StreamKernelSpec& spec) : PointBenchmark(stream_info(spec)), spec_(spec) {}

  bool available(const Device& d) const override {
    for (auto op : d.stream_ops())
      if (op == spec_.op) return true;
    return false;
  }

  StreamPoint point(const nlohmann::json& params) const override {
    return {parse_dtype_or_throw(params.at("dtype").get<std::string>()), params.at("elements").get<std::uint64_t>()};
  }

  std::vector<nlohmann::json> cases(const PlanContext& ctx) const override {
    std::vector<DType> types = ctx.opts.dtypes;
    if (types.empty()) types = ctx.opts.quick ? std::vector<DType>{DType::fp64} : ctx.device.stream_dtypes();
    const std::uint64_t bytes =
        ctx.opts.array_bytes.value_or(ctx.opts.quick ? (64ULL << 20) : ctx.device.default_stream_array_bytes());
    std::vector<nlohmann::json> out;
    for (DType t : types) {
      const auto supported = ctx.device.stream_dtypes();
      if (std::find(supported.begin(), supported.end(), t) == supported.end()) continue;
      const std::uint64_t elements = bytes / dtype_size(t);
      if (elements == 0) throw Error(fmt::format("STREAM array size {} is smaller than one {} element", bytes, dtype_name(t)));
      out.push_back({{"dtype", dtype_name(t)}, {"array_bytes", elements * dtype_size(t)}, {"elements", elements}});
    }
    return out;
  }

  // Its timed repetitions can take turns with other groups' (interleaved, harness/repetition_gate.h).
  std::optional<int> timed_repetitions(const nlohmann::json&, const RunOptions& opts) const override {
    return kernel_methodology(opts).reps;
  }

  RankMeasurement measure(const StreamPoint& p, RunContext& ctx) const override {
    const DType type = p.dtype;
    const auto n = p.elements;
    const auto m = kernel_methodology(ctx.opts);
    decltype(ctx.device.make_stream(type, n, ctx.seed)) arrays;
    agreed_setup(ctx.group, key(), [&] { arrays = ctx.device.make_stream(type, n, ctx.seed); });
    const double bytes = static_cast<double>(stream_bytes(spec_.op, n, dtype_size(type)));
    RankMeasurement out;
    out.reps = time_independent(
        ctx.group, FaultSite::memory, m.warmup, m.reps, [&] { return arrays->run(spec_.op); },
        [&](double s) { return bytes / s / 1e9; }, ctx.gate);
    out.metrics["bytes_per_pass"] = bytes;
    // BabelStream prints the best repetition, the row's value is the median: both are given. Per
    // rank the best bandwidth and its time; for the row the sum of the ranks' bests, as the
    // aggregate sums their medians (one allgather after timing, identical on every member).
    const double best = out.reps.empty() ? 0.0 : *std::max_element(out.reps.begin(), out.reps.end());
    out.metrics["best_gb_s"] = best;
    if (best > 0) out.metrics["best_time_us"] = bytes / (best * 1e9) * 1e6;
    double best_sum = 0;
    for (double b : ctx.group.allgather(best)) best_sum += b;
    out.row_metrics["best_aggregate_gb_s"] = best_sum;
    apply_check(out, arrays->verify(spec_.op));
    return out;
  }

  ExpectedPeak peak_of(const StreamPoint&, const PeakContext& ctx, const std::string&) const override {
    if (ctx.table == nullptr) return {std::nullopt, "no peaks table loaded"};
    return ctx.table->memory_bandwidth(ctx.device);
  }

  // Three arrays (every kernel's harness allocates a, b and c), each touched on each pass.
  PointDemand demand_of(const StreamPoint& p, const DemandContext& ctx) const override {
    return buffers_demand(3, "arrays", saturating_mul(p.elements, dtype_size(p.dtype)), ctx.opts);
  }

 private:
  const StreamKernelSpec& spec_;
};

}  // namespace

void register_stream_benchmarks(Registry& r) {
  for (const auto& spec : kStreamKernels) r.add(std::make_unique<StreamBenchmark>(spec));
}

}  // namespace gpuscale
