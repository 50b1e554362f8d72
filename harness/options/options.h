#pragma once
// Everything `gpuscale run` takes from its command line, after parsing. Unset optionals mean "the
// benchmark's default for this backend and plan" (--quick or thorough).
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/outlier_defaults.h"
#include "backends/backend_options.h"
#include "collectives/collective_table.h"
#include "core/dtype.h"
#include "harness/options/run_modes.h"
#include "health/telemetry_options.h"
#include "kernels/gemm_spec.h"

namespace gpuscale {

struct RunOptions {
  std::string backend = "auto";                 // cpu | cuda | auto
  bool quick = false;                           // small plan for smoke tests and CI
  std::vector<std::string> benchmarks;          // keys or groups; empty = every benchmark of the backend
  std::vector<DType> dtypes;                    // empty = each benchmark's defaults
  std::optional<std::uint64_t> min_bytes;       // collectives -b
  std::optional<std::uint64_t> max_bytes;       // collectives -e
  std::optional<std::uint64_t> step_factor;     // collectives -f
  std::optional<std::uint64_t> step_bytes;      // collectives -i
  std::optional<int> iters;                     // collectives -n: operations per timed repetition
  std::optional<int> warmup;                    // warm-up passes / operations before timing
  std::optional<int> reps;                      // timed repetitions (statistics are over these)
  std::vector<RedOp> ops;                       // reduction ops for reducing collectives
  std::vector<bool> in_place;                   // placements: false = out-of-place, true = in-place
  std::vector<AlltoallvSkew> skews;             // alltoallv: how data spreads (empty = uniform, zipf:1.2)
  std::optional<std::uint64_t> array_bytes;     // STREAM bytes per array
  std::vector<GemmShape> gemm_shapes;           // GEMM shapes
  std::optional<std::uint64_t> copy_bytes;      // copy benchmarks: bytes per copy
  std::string cluster;                          // --cluster
  std::string output;                           // -o ("-": cli/cmd_run.cpp writes a temporary file, then stdout)
  bool result_to_stdout = false;                // -o -: the result JSON goes to stdout, human output to stderr
  bool quiet = false;                           // --quiet: no progress lines, no summary (errors still printed)
  std::vector<std::string> notes;               // said once by rank 0 before the run (-c 0)
  std::optional<std::uint64_t> seed;            // input seed (random when unset; recorded)
  std::string time_reduce = "avg";              // collectives: avg | min | max | rank0 (nccl-tests -a)
  bool iter_timing = true;                      // collectives -I: per-iteration timing pass (nccl-tests -I)
  int skip_iters = 0;                           // collectives -K: leading iterations left out of its summary
  BackendOptions backend_options;               // threads, peaks, -T, link overrides: all a backend sees
  health::TelemetryOptions telemetry;           // NVML sampling and GPU verdicts (health/)
  std::vector<std::string> transports;          // collective transports to compare (CUDA: nccl, mpi); empty = default
  std::optional<std::uint64_t> dp_width;        // dp-step: layer width
  std::optional<int> dp_depth;                  // dp-step: layers
  std::vector<std::string> models;              // train-step: presets or model files (empty: its defaults)
  std::vector<std::string> layouts;             // train-step: parallel layouts (empty: each model's defaults)
  std::optional<int> layers;                    // train-step: layers of every model (unset: the model's own)
  std::vector<std::string> scalings;            // train-step: "weak", "strong" (empty: weak)
  // Burn-in (harness/benchmarks/burn/burn_plan.h, docs/acceptance.md): a run with --duration measures the burn
  // benchmarks' windows only.
  double burn_duration_s = 0;                   // --duration (0: no burn-in)
  std::optional<double> burn_window_s;          // --window (unset: kDefaultBurnWindowS)
  std::vector<BurnKind> burn_kinds;             // --burn (empty: mix)
  // The checkpoint storage benchmark (harness/benchmarks/checkpoint/checkpoint_plan.h): where it writes, and how much.
  std::string ckpt_dir;                         // --ckpt-dir ("" : the storage benchmarks cannot run)
  std::optional<std::uint64_t> ckpt_bytes;      // --ckpt-size: the whole checkpoint, split over each count's ranks
  std::optional<std::uint64_t> ckpt_rank_bytes; // --ckpt-rank-size: each rank's shard (the checkpoint grows with the count)
  std::optional<std::uint64_t> dp_batch;        // dp-step: samples per rank per step
  std::optional<std::uint64_t> dp_bucket;       // dp-step: gradient bucket cap, bytes
  // Fleet coverage (docs/fleet.md).
  TilingMode tiling = TilingMode::concurrent;   // --tiling: how the ranks are cut into groups at each count
  RepOrder rep_order = RepOrder::interleaved;   // --rep-order: how groups taking turns order their repetitions
  double outlier = kDefaultOutlierFraction;     // --outlier: a fixed floor below the median (0: none)
  double min_effect = kDefaultMinEffect;        // --min-effect: nothing slower by less is named
  double false_alarm = kDefaultFalseAlarm;      // --false-alarm: a clean run's chance of naming anything
  std::optional<int> pairs_rounds;              // --pairs-rounds: sampled tournament rounds; unset = every pair
  bool fail_on_outliers = false;                // --fail-on-outliers: a run that names outliers exits 1
  bool rank_stats = false;                      // --rank-stats: rows keep each rank's repetition statistics
  std::vector<std::string> command_line;        // argv, recorded in the result file
  // Reliability (docs/reliability.md).
  std::string resume;                           // --resume FILE: continue the interrupted run in FILE
  bool force = false;                           // --force: -o may replace an existing file
  double max_time_s = 24 * 3600.0;              // --max-time: the most the plan may be estimated to take (0 = no limit)
  std::optional<double> watchdog_s;             // --watchdog: seconds per point (0 = off); unset = scaled default
  std::set<std::string> given;                  // plan.options keys set on the command line (harness/run/resume.h)
};

}  // namespace gpuscale
