#pragma once
// Per-iteration timing of a collective (nccl-tests' -I/-K, issue 45): each timed iteration's slowest
// rank and its time, summarised as nccl-tests 2.19 summarises its times_us (src/util.cu,
// computeIterStats): p50 the upper median sorted[n/2], p95/p99 by nearest rank
// (min(n-1, ceil(n*p/100)-1)), the population stdev, cv% = stdev/avg*100; the first `skip` samples
// (-K) left out of the summary but kept in the series. Beside them gpuscale's own judgements: spikes
// (an iteration over kSpikeFactor times the median) and the rank most often slowest (the straggler).
// Pure: the run (harness/benchmarks/collectives.cpp) and the nccl-tests JSON export
// (analysis/formats/nccl_tests_json.cpp) both compute from here.
#include <cstddef>
#include <optional>
#include <vector>

namespace gpuscale {

// An iteration slower than this times the summary's median is a spike (analyze_perf_json.py's default
// --threshold is the same 1.5, there over the mean).
inline constexpr double kSpikeFactor = 1.5;
// A summary whose cv% is above this is flagged noisy (analyze_perf_json.py's table marks cv > 5%).
inline constexpr double kNoisyCvPct = 5.0;

struct IterStats {
  std::size_t n = 0;  // samples summarised (after the skip)
  double min = 0, max = 0, avg = 0, p50 = 0, p95 = 0, p99 = 0, stdev = 0, cv_pct = 0;
  std::size_t spikes = 0;  // samples above kSpikeFactor x p50
};

// nullopt when no sample is left after `skip` (the caller refuses skip >= iterations up front).
std::optional<IterStats> iter_stats(const std::vector<double>& times, std::size_t skip);

// The rank slowest most often among `slowest_rank` (one entry per iteration, after `skip`), ties to the
// lower rank; nullopt when none is left. `share`: the fraction of those iterations it was slowest in.
struct IterStraggler {
  int rank = 0;
  std::size_t iterations = 0;
  double share = 0;
};
std::optional<IterStraggler> iter_straggler(const std::vector<int>& slowest_rank, std::size_t skip);

// Each rank's own series (nccl-tests' per_process_max_times_us) travels, by an allgather inside the group
// and then in the row to rank 0 and the file, only at the whole job's GPU count (the row the nccl-tests
// export takes) and only where the job has kIterRankSeriesJobRanks ranks or fewer: every group's first
// rank sends its row, so kept at every count rank 0 would take N series per row, and the file N x -n
// figures per row. Beyond it only the slowest-rank series travels (one per group, docs/scale.md).
// Never at one rank (no one to compare with).
inline constexpr int kIterRankSeriesJobRanks = 64;
inline bool iter_rank_series_kept(int group_ranks, int job_ranks) {
  return group_ranks > 1 && group_ranks == job_ranks && job_ranks <= kIterRankSeriesJobRanks;
}

}  // namespace gpuscale
