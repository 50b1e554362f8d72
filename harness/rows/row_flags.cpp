#include "harness/rows/row_flags.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/iter_stats.h"
#include "core/units.h"
#include "results/row_fields.h"
#include "text/number_text.h"

namespace gpuscale {
namespace {

// The bytes the cache would have to hold for the row's ranks, when footprint and cache are known.
std::optional<std::uint64_t> shared_footprint(const FlagContext& ctx) {
  if (!ctx.footprint_bytes || ctx.cache_bytes == 0) return std::nullopt;
  return saturating_mul(*ctx.footprint_bytes, static_cast<std::uint64_t>(std::max(ctx.ranks_sharing_cache, 1)));
}

std::string cache_text(const FlagContext& ctx) {
  return fmt::format("{} {}", format_size(ctx.cache_bytes), ctx.cache_name.empty() ? "last-level cache" : ctx.cache_name);
}

// The footprint (per rank, and per cache when ranks share one) in words.
std::string footprint_text(const FlagContext& ctx) {
  const int sharing = std::max(ctx.ranks_sharing_cache, 1);
  if (sharing == 1) return fmt::format("the footprint {}", format_size(*ctx.footprint_bytes));
  return fmt::format("the footprint {} ({} ranks x {})", format_size(*shared_footprint(ctx)), sharing,
                     format_size(*ctx.footprint_bytes));
}

}  // namespace

std::vector<RowFlag> row_flags(const ResultRow& row, const FlagContext& ctx) {
  std::vector<RowFlag> out;
  if (row.status != RowStatus::ok) return out;
  const auto spread = spread_of_ranks(row.ranks);
  const double limit = 1.0 + kFlagNoiseFloor + (spread ? spread->up : 0.0);
  const auto held = shared_footprint(ctx);
  const bool cache_held = held && static_cast<double>(*held) < kCacheFootprintFactor * static_cast<double>(ctx.cache_bytes);
  // Only a GB/s figure is made faster by a cache; a TFLOP/s figure above its peak is not explained by it.
  const bool bandwidth = row.unit == "GB/s";
  if (!ctx.virtual_gpu.empty()) out.push_back({"virtual_gpu", ctx.virtual_gpu});
  if (row.metrics.contains("cache_possible") && row.metrics["cache_possible"].is_string())  // a checkpoint read
    out.push_back({"cache_possible", row.metrics["cache_possible"].get<std::string>()});

  if (ctx.memory_benchmark && cache_held)
    out.push_back({"cache_resident", fmt::format("{} is under {:g}x the {}: a cache figure, not memory bandwidth",
                                                 footprint_text(ctx), kCacheFootprintFactor, cache_text(ctx))});
  if (row.fraction_of_peak && *row.fraction_of_peak > limit) {
    std::string why;
    if (const auto note = field_json(row, fields::busbw_note); note.is_string())
      why = note.get<std::string>();  // NVLS: the switch reduced, the links carried less
    else if (bandwidth && cache_held)
      why = fmt::format("{} fits under {:g}x the {}: it ran from cache, the peak is memory's", footprint_text(ctx),
                        kCacheFootprintFactor, cache_text(ctx));
    else
      why = "no measurement can beat a true peak: the peak is likely wrong (or too low for this device)";
    out.push_back({"above_peak", fmt::format("{:.1f}% of its expected peak {} {} ({}); {}", *row.fraction_of_peak * 100,
                                             figure_text(row.expected_peak.value_or(0)), row.unit, row.peak_source, why)});
  }
  if (!ctx.efficiency_is_peak && row.gpu_count > 1 && row.scaling_efficiency && *row.scaling_efficiency > limit) {
    std::string why;
    if (bandwidth && cache_held)
      why = fmt::format("{} fits in the {}: cache, not memory, at this count", footprint_text(ctx), cache_text(ctx));
    else
      why = "the 1-GPU reference is likely low (noise, clocks, or cores and caches the ranks share), not a real gain";
    out.push_back({"superlinear", fmt::format("scaling efficiency {:.1f}% is more than {} x the 1-GPU figure; {}",
                                              *row.scaling_efficiency * 100, row.gpu_count, why)});
  }
  // The per-iteration pass (harness/benchmarks/iter_timing.h): core/iter_stats.h's two rules.
  if (const auto spikes = number_field(row, fields::iter_spikes); spikes && *spikes > 0)
    out.push_back({"iter_spikes", fmt::format("{:g} of the per-iteration pass's iterations took over {:g}x its median "
                                              "({} us)", *spikes, kSpikeFactor,
                                              figure_text(number_field(row, fields::iter_p50_us).value_or(0)))});
  if (const auto cv = number_field(row, fields::iter_cv_pct); cv && *cv > kNoisyCvPct)
    out.push_back({"iter_noisy", fmt::format("the per-iteration pass varied by {:.1f}% (coefficient of variation; over "
                                             "{:g}% is noisy)", *cv, kNoisyCvPct)});
  if (ctx.quick)
    out.push_back({"quick", "a --quick point: sized to finish fast, not to be representative (run without --quick)"});
  return out;
}

}  // namespace gpuscale
