#pragma once
// The flags a built row carries (results/result_file.h, RowFlag; docs/results.md, "Flags"): an
// impossible or unrepresentative figure is flagged with its likely cause, never passed off as a
// measurement of what the benchmark names. Pure logic, unit-tested directly; measure_row sets them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/result_file.h"

namespace gpuscale {

// A memory benchmark whose footprint is under this many times the last-level cache measures the
// cache, not memory (BabelStream's own rule of thumb is 4x).
inline constexpr double kCacheFootprintFactor = 4.0;
// "Beyond the noise": a figure counts as above 100% (of its peak, or of k x the 1-GPU figure) when it
// is above 1 + this floor + the row's own upward repetition spread.
inline constexpr double kFlagNoiseFloor = 0.05;

struct FlagContext {
  bool quick = false;               // the run was --quick: every row says so
  bool memory_benchmark = false;    // its figure claims memory bandwidth (STREAM): the cache rule applies
  bool efficiency_is_peak = false;  // the scaling efficiency is the fraction of the peak (collectives)
  std::optional<std::uint64_t> footprint_bytes;  // bytes one rank works on (its buffers), when known
  int ranks_sharing_cache = 1;      // ranks of the row whose footprints one cache holds (CPU: on one node)
  std::uint64_t cache_bytes = 0;    // the last-level cache (CPU LLC, GPU L2); 0 when unknown
  std::string cache_name;           // "L3", "L2"
  std::string virtual_gpu;          // why the row's GPUs are vGPUs (health/virtual_gpu.h); "" whole GPUs
};

// The flags of `row` (status ok rows only; a failed or wrong one has no figure to flag), in a fixed
// order: virtual_gpu, cache_possible (a checkpoint read whose pages stayed cached), cache_resident,
// above_peak, superlinear, iter_spikes, iter_noisy (the per-iteration pass), quick.
std::vector<RowFlag> row_flags(const ResultRow& row, const FlagContext& ctx);

}  // namespace gpuscale
