#include "core/iter_stats.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace gpuscale {
namespace {

// nccl-tests' percentileIndex: the nearest rank, min(n - 1, ceil(n * p / 100) - 1).
std::size_t percentile_index(std::size_t n, std::size_t p) { return std::min(n - 1, (n * p + 99) / 100 - 1); }

}  // namespace

std::optional<IterStats> iter_stats(const std::vector<double>& times, std::size_t skip) {
  if (skip >= times.size()) return std::nullopt;
  std::vector<double> s(times.begin() + static_cast<std::ptrdiff_t>(skip), times.end());
  std::sort(s.begin(), s.end());
  IterStats st;
  st.n = s.size();
  st.min = s.front();
  st.max = s.back();
  st.p50 = s[st.n / 2];
  st.p95 = s[percentile_index(st.n, 95)];
  st.p99 = s[percentile_index(st.n, 99)];
  double sum = 0;
  for (double v : s) sum += v;
  st.avg = sum / static_cast<double>(st.n);
  double var = 0;
  for (double v : s) var += (v - st.avg) * (v - st.avg);
  st.stdev = std::sqrt(var / static_cast<double>(st.n));
  st.cv_pct = st.avg > 0 ? st.stdev / st.avg * 100.0 : 0.0;
  st.spikes = static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [&](double v) { return v > kSpikeFactor * st.p50; }));
  return st;
}

std::optional<IterStraggler> iter_straggler(const std::vector<int>& slowest_rank, std::size_t skip) {
  if (skip >= slowest_rank.size()) return std::nullopt;
  std::map<int, std::size_t> times_slowest;  // ordered: the first of the most often is the lowest rank
  for (std::size_t i = skip; i < slowest_rank.size(); ++i) ++times_slowest[slowest_rank[i]];
  IterStraggler out;
  for (const auto& [rank, count] : times_slowest)
    if (count > out.iterations) out = {rank, count, 0};
  out.share = static_cast<double>(out.iterations) / static_cast<double>(slowest_rank.size() - skip);
  return out;
}

}  // namespace gpuscale
