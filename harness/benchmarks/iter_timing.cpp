#include "harness/benchmarks/iter_timing.h"

#include <cmath>
#include <vector>

#include "core/fault.h"
#include "core/iter_stats.h"

namespace gpuscale {
namespace {

// Microseconds to the nanosecond (the clocks' own resolution: further digits are a double's noise, and
// 18 characters a figure in the file instead of 7).
double micros(double seconds) { return std::round(seconds * 1e9) / 1e3; }

std::vector<double> micros(const std::vector<double>& seconds, std::size_t from, std::size_t n) {
  std::vector<double> out;
  for (std::size_t i = from; i < from + n; ++i) out.push_back(micros(seconds[i]));
  return out;
}

}  // namespace

void measure_iterations(CollectiveRunner& runner, const Group& group, const WorkPlace& place, int iters, int skip,
                        int job_ranks, nlohmann::json& row_metrics) {
  if (iters <= 0) return;
  std::vector<double> mine;
  {
    const FaultScope planted(place);  // a planted fault acts in this pass as in the timed repetitions
    mine = runner.time_each(iters);
  }
  for (double& t : mine) t = stretch_timed(t);  // slow-host-reported: the figure stretched, nothing slept
  const auto slowest = group.max_each(mine);
  const auto skipped = static_cast<std::size_t>(skip);
  const auto series = micros(slowest.value, 0, slowest.value.size());  // the figures below are this series'
  const auto st = iter_stats(series, skipped);
  if (!st) return;
  row_metrics["iter_skipped"] = skip;
  row_metrics["iter_p50_us"] = st->p50;
  row_metrics["iter_p99_us"] = st->p99;
  row_metrics["iter_max_us"] = st->max;
  row_metrics["iter_cv_pct"] = st->cv_pct;
  row_metrics["iter_spikes"] = st->spikes;
  row_metrics["iter_times_us"] = series;
  if (group.size() > 1) {  // at one rank there is no one to be slower than
    if (const auto who = iter_straggler(slowest.world_rank, skipped)) {
      row_metrics["iter_straggler_rank"] = who->rank;
      row_metrics["iter_straggler_share"] = who->share;
    }
  }
  if (iter_rank_series_kept(group.size(), job_ranks)) {
    const auto all = group.allgather(mine);  // member after member, in group rank order
    nlohmann::json per_rank = nlohmann::json::array();
    for (int r = 0; r < group.size(); ++r) per_rank.push_back(micros(all, static_cast<std::size_t>(r) * mine.size(), mine.size()));
    row_metrics["iter_rank_times_us"] = std::move(per_rank);
  }
}

}  // namespace gpuscale
