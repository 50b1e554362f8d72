#include "harness/rows/row_builder.h"

#include <fmt/format.h>

#include "core/stats.h"

namespace gpuscale {

std::optional<double> independent_efficiency(std::optional<double> aggregate, int k, std::optional<double> single) {
  if (!aggregate || !single || !(*single > 0) || k <= 0) return std::nullopt;
  return *aggregate / (k * *single);
}

ResultRow build_row(const RowInputs& in) {
  ResultRow row;
  row.benchmark = in.benchmark;
  row.scope = in.scope == Scope::independent ? "independent" : "collective";
  row.params = in.params;
  row.gpu_count = in.gpu_count;
  row.nodes = in.nodes;
  row.topology = in.topology;
  row.unit = in.unit;

  bool any_failed = false, all_skipped = !in.ranks.empty(), any_invalid = false, all_measured = true;
  double sum = 0;
  for (const auto& e : in.ranks) {
    RankValue v;
    v.rank = e.rank;
    v.host = e.host;
    v.device_index = e.device_index;
    v.metrics = e.m.metrics;
    if (e.m.stats) {
      v.stats = *e.m.stats;
      v.value = v.stats.median;
      sum += *v.value;
    } else {
      all_measured = false;
    }
    v.valid = e.m.valid && !e.m.failed && !e.m.skipped;
    v.error = e.m.message;
    any_failed |= e.m.failed;
    all_skipped &= e.m.skipped;
    any_invalid |= !e.m.valid;
    if (!e.m.message.empty()) {
      auto msg = fmt::format("rank {} ({}): {}", e.rank, e.host, e.m.message);
      if (e.m.skipped) msg = e.m.message;  // identical on every rank
      if (std::find(row.errors.begin(), row.errors.end(), msg) == row.errors.end()) row.errors.push_back(msg);
    }
    row.ranks.push_back(std::move(v));
  }
  row.status = any_failed ? RowStatus::failed
               : all_skipped ? RowStatus::skipped
               : any_invalid ? RowStatus::invalid
                             : RowStatus::ok;
  if (!in.ranks.empty()) row.metrics = in.ranks.front().m.row_metrics;
  // The fleet benchmarks' pair matrices are the row's own field, not one of its figures.
  if (row.metrics.contains("matrices")) {
    row.matrices = row.metrics["matrices"];
    row.metrics.erase("matrices");
  }
  row.expected_peak = in.peak.value;
  row.peak_source = in.peak.source;

  if (row.status != RowStatus::ok) {
    // A wrong or failed measurement is never reported as a throughput.
    row.efficiency_basis = fmt::format("none: the measurement is {}", row_status_name(row.status));
    return row;
  }
  const Efficiency rule =
      in.efficiency.value_or(in.scope == Scope::independent ? Efficiency::per_device : Efficiency::link_peak);
  if (in.scope == Scope::independent)
    row.aggregate = all_measured ? std::optional<double>(sum) : std::nullopt;
  else if (!in.ranks.empty())
    row.aggregate = in.ranks.front().m.aggregate;

  if (rule == Efficiency::link_peak) {
    if (row.aggregate && in.peak.value && *in.peak.value > 0) {
      row.fraction_of_peak = *row.aggregate / *in.peak.value;
      row.scaling_efficiency = row.fraction_of_peak;
      row.efficiency_basis = fmt::format("busbw / {} link peak", in.topology);
    } else {
      row.efficiency_basis = fmt::format("none: {}", in.peak.source);
    }
    return row;
  }
  // Per device and weak scaling: against k x the same point at 1 GPU (at 1 GPU, its own reference).
  const auto single = in.gpu_count == 1 ? row.aggregate : in.single_rank_value;
  row.scaling_efficiency = independent_efficiency(row.aggregate, in.gpu_count, single);
  const char* basis = rule == Efficiency::weak_scaling
                          ? "weak scaling: throughput / (gpu_count x throughput at 1 GPU)"
                          : "aggregate / (gpu_count x value at 1 GPU)";
  row.efficiency_basis = row.scaling_efficiency ? basis : "none: no valid 1-GPU value for this point";
  if (row.aggregate && in.peak.value && *in.peak.value > 0)
    row.fraction_of_peak = *row.aggregate / (in.gpu_count * *in.peak.value);
  return row;
}

}  // namespace gpuscale
