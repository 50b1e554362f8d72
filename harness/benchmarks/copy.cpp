// Copy bandwidth (nvbandwidth's main cases): one registry entry per case of kernels/copy_table.h, on
// devices with a copy engine (the CUDA backend). Peer cases have one point per peer offset and
// direction: rank r's GPU copies with GPU (own + offset) mod visible, so at offset d every GPU of the
// node has one partner, and the points over d = 1 .. visible-1 form the node's P2P matrix.
#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "core/stats.h"
#include "core/term_text.h"
#include "core/units.h"
#include "harness/benchmarks/agreed_setup.h"
#include "harness/benchmarks/defaults.h"
#include "harness/benchmarks/independent.h"
#include "harness/registry.h"

namespace gpuscale {
namespace {

std::uint64_t copy_size(const RunOptions& o) {
  return copy_size_rounded(o.copy_bytes.value_or(o.quick ? (32ULL << 20) : (256ULL << 20)));
}

BenchmarkInfo copy_info(const CopyCaseSpec& spec) {
  BenchmarkInfo info{fmt::format("copy.{}", spec.name),
                     "copy",
                     fmt::format("copy {}; GB/s counts {}; every copy checked word by word", spec.description, spec.counted),
                     "GB/s",
                     Scope::independent,
                     Efficiency::per_device,
                     {{"size_bytes", "bytes per copy (--copy-size; default 256M, --quick 32M)"}},
                     {"cuda"}};
  if (spec.peer) {
    info.parameters.push_back({"peer_offset", "the peer is GPU (own + offset) mod visible GPUs; one point per offset 1 .. visible-1"});
    info.parameters.push_back({"direction", "write (this GPU into the peer's memory) or read (from the peer's memory)"});
    info.parameters.push_back({"mode", "all-pairs (every rank's pair copies at once) or one-pair (one pair at a time, "
                                       "the others waiting, as nvbandwidth)"});
  }
  return info;
}

// A copy point is the engine's own case (kernels/copy_table.h), its seed set when it runs.
class CopyBenchmark final : public PointBenchmark<CopyCase> {
 public:
  explicit CopyBenchmark(const CopyCaseSpec& spec) : PointBenchmark(copy_info(spec)), spec_(spec) {}

  bool available(const Device& d) const override { return d.copies() != nullptr; }

  CopyCase point(const nlohmann::json& params) const override {
    CopyCase c;
    c.kind = spec_.kind;
    c.size_bytes = params.at("size_bytes").get<std::uint64_t>();
    if (spec_.peer) {
      c.peer_offset = params.at("peer_offset").get<int>();
      const auto dir = params.at("direction").get<std::string>();
      const auto parsed = parse_peer_direction(dir);
      if (!parsed) throw Error(fmt::format("invalid copy direction '{}' in a plan point", terminal_quote(dir)));
      c.direction = *parsed;
      // Points of files written before the parameter existed ran every pair at once.
      const auto mode = params.value("mode", std::string(peer_mode_name(PeerMode::all_pairs)));
      const auto m = parse_peer_mode(mode);
      if (!m) throw Error(fmt::format("invalid peer copy mode '{}' in a plan point", terminal_quote(mode)));
      c.mode = *m;
    }
    return c;
  }

  std::vector<nlohmann::json> cases(const PlanContext& ctx) const override {
    const std::uint64_t size = copy_size(ctx.opts);
    if (!spec_.peer) return {{{"size_bytes", size}}};
    // One GPU visible: one point, which every rank reports as skipped with the reason.
    const int visible = std::max(ctx.device.copies()->visible_gpus(), 2);
    std::vector<nlohmann::json> out;
    for (int off = 1; off < visible; ++off)
      for (auto dir : {PeerDirection::write, PeerDirection::read})
        for (auto mode : {PeerMode::all_pairs, PeerMode::one_pair})
          out.push_back({{"size_bytes", size},
                         {"peer_offset", off},
                         {"direction", peer_direction_name(dir)},
                         {"mode", peer_mode_name(mode)}});
    return out;
  }

  // Its timed repetitions can take turns with other groups' (interleaved, harness/repetition_gate.h),
  // but for peer copies one pair at a time, whose pairs take turns of their own inside the group.
  std::optional<int> timed_repetitions(const nlohmann::json& params, const RunOptions& opts) const override {
    if (spec_.peer && point(params).mode != PeerMode::all_pairs) return std::nullopt;
    return kernel_methodology(opts).reps;
  }

  RankMeasurement measure(const CopyCase& point, RunContext& ctx) const override {
    CopyEngine* engine = ctx.device.copies();
    CopyCase c = point;
    c.seed = ctx.seed;
    RankMeasurement out;
    if (auto why = engine->unavailable(c)) {
      out.skipped = true;
      out.message = *why;
      return out;
    }
    const auto m = kernel_methodology(ctx.opts);
    decltype(engine->make(c)) transfer;
    agreed_setup(ctx.group, key(), [&] { transfer = engine->make(c); });
    const double bytes = static_cast<double>(copy_bytes_counted(c.kind, c.size_bytes));
    const auto to_gbps = [&](double s) { return bytes / s / 1e9; };
    if (c.mode == PeerMode::all_pairs || !spec_.peer) {
      out.reps = time_independent(ctx.group, FaultSite::memory, m.warmup, m.reps, [&] { return transfer->run(); }, to_gbps,
                                  ctx.gate);
    } else {
      // One pair at a time: the group takes the turns together; in its own turn a rank warms up and
      // times alone while the others wait at the next barrier.
      for (const auto& turn : peer_copy_turns(c.mode, ctx.group.size())) {
        ctx.group.barrier();
        if (std::find(turn.begin(), turn.end(), ctx.group.rank()) == turn.end()) continue;
        out.reps = time_repetitions(FaultSite::memory, m.warmup, m.reps, [&] { return transfer->run(); }, to_gbps, [] {});
      }
      ctx.group.barrier();
    }
    out.metrics["bytes_counted"] = bytes;
    // d2d counts read + write; the once-counted figure (nvbandwidth's) goes beside it, per rank and,
    // summed over the group like the row's aggregate, in the row.
    out.row_metrics["counting"] = copy_counting_name(c.kind);
    const double once = static_cast<double>(copy_bytes_once(c.kind, c.size_bytes));
    if (once != bytes) {
      const double mine = out.reps.empty() ? 0.0 : median_of(out.reps) * once / bytes;
      out.metrics["bytes_once_counted"] = once;
      out.metrics["once_counted_gbps"] = mine;
      double sum = 0;
      for (double v : ctx.group.allgather(mine)) sum += v;
      out.row_metrics["once_counted_gbps"] = sum;
    }
    out.metrics["copy"] = transfer->details();
    apply_check(out, transfer->verify());
    return out;
  }

  ExpectedPeak peak_of(const CopyCase&, const PeakContext& ctx, const std::string&) const override {
    if (ctx.table == nullptr) return {std::nullopt, "no peaks table loaded"};
    switch (spec_.kind) {
      case CopyKind::h2d:
      case CopyKind::d2h: return ctx.table->link_bandwidth(ctx.device, LinkKind::host);
      case CopyKind::bidir: {
        auto p = ctx.table->link_bandwidth(ctx.device, LinkKind::host);
        if (p.value) *p.value *= 2;
        p.source = "both directions of " + p.source;
        return p;
      }
      case CopyKind::d2d: return ctx.table->memory_bandwidth(ctx.device);
      case CopyKind::p2p_ce:
      case CopyKind::p2p_sm: return ctx.table->link_bandwidth(ctx.device, LinkKind::peer);
    }
    return {std::nullopt, "unknown copy case"};
  }

  // A source and a destination of the copy size (on this GPU, or one of them on the peer).
  PointDemand demand_of(const CopyCase& c, const DemandContext& ctx) const override {
    return buffers_demand(2, "buffers", c.size_bytes, ctx.opts);
  }

 private:
  const CopyCaseSpec& spec_;
};

}  // namespace

void register_copy_benchmarks(Registry& r) {
  for (const auto& spec : kCopyCases) r.add(std::make_unique<CopyBenchmark>(spec));
}

}  // namespace gpuscale
