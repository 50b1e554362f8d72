// STREAM memory-bandwidth benchmarks: one registry entry per kernel of kernels/stream_table.h.
#include <fmt/format.h>

#include "core/error.h"
#include "core/units.h"
#include "harness/benchmarks/defaults.h"
#include "harness/benchmarks/independent.h"
#include "harness/registry.h"

namespace gpuscale {
namespace {

class StreamBenchmark final : public Benchmark {
 public:
  explicit StreamBenchmark(const StreamKernelSpec& spec) : spec_(spec) {}

  std::string key() const override { return fmt::format("stream.{}", spec_.name); }
  std::string group() const override { return "stream"; }
  std::string description() const override {
    return fmt::format("STREAM {}: {}; {} arrays touched per element", spec_.name, spec_.formula,
                       spec_.arrays_read + spec_.arrays_written);
  }
  std::string unit() const override { return "GB/s"; }
  Scope scope() const override { return Scope::independent; }
  std::vector<ParamDoc> parameters() const override {
    return {{"dtype", "element type (--dtypes; default fp64,fp32, --quick fp64)"},
            {"array_bytes", "bytes per array (--array-size; default 4x the last-level cache, or 8x the GPU's L2 and at least 1G)"},
            {"elements", "elements per array"}};
  }
  std::vector<std::string> backends() const override { return {"cpu", "cuda"}; }
  bool available(const Device& d) const override {
    for (auto op : d.stream_ops())
      if (op == spec_.op) return true;
    return false;
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

  RankMeasurement run(const nlohmann::json& params, RunContext& ctx) const override {
    const DType type = parse_dtype_or_throw(params.at("dtype").get<std::string>());
    const auto n = params.at("elements").get<std::uint64_t>();
    const auto m = kernel_methodology(ctx.opts);
    auto arrays = ctx.device.make_stream(type, n, ctx.seed);
    const double bytes = static_cast<double>(stream_bytes(spec_.op, n, dtype_size(type)));
    RankMeasurement out;
    out.reps = time_independent(
        ctx.group, m.warmup, m.reps, [&] { return arrays->run(spec_.op); },
        [&](double s) { return bytes / s / 1e9; });
    out.metrics["bytes_per_pass"] = bytes;
    apply_check(out, arrays->verify(spec_.op));
    return out;
  }

  ExpectedPeak expected_peak(const nlohmann::json&, const PeakContext& ctx, const std::string&) const override {
    if (ctx.table == nullptr) return {std::nullopt, "no peaks table loaded"};
    return ctx.table->memory_bandwidth(ctx.device);
  }

  // Three arrays (every kernel's harness allocates a, b and c), each touched on each pass.
  PointDemand demand(const nlohmann::json& params, const DemandContext& ctx) const override {
    const DType type = parse_dtype_or_throw(params.at("dtype").get<std::string>());
    return buffers_demand(3, "arrays", saturating_mul(params.at("elements").get<std::uint64_t>(), dtype_size(type)), ctx.opts);
  }

 private:
  const StreamKernelSpec& spec_;
};

}  // namespace

void register_stream_benchmarks(Registry& r) {
  for (const auto& spec : kStreamKernels) r.add(std::make_unique<StreamBenchmark>(spec));
}

}  // namespace gpuscale
