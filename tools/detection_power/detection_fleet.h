#pragma once
// The synthetic fleets of the detection-power trials (docs/fleet.md, "Detection power"): what a fleet of
// GPUs measures under a stated GPU-like noise model, with at most one fault planted, made through the
// run's own code where the run has code for it (the row builder and group rows for the 1-GPU groups,
// the confirming pass of a pair matrix, the readers' per-rank band for the history). Pure: a seed in,
// rows, matrices and series out; the same seed gives the same fleet, with or without the fault.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/outliers.h"
#include "core/fault_kinds.h"
#include "history/trend.h"
#include "results/result_file.h"

namespace gpuscale::detection {

// A fault of size x: the faulty thing takes 1 / (1 - x) as long, so its throughput (every figure here
// is higher-is-better) is (1 - x) of a healthy one's: 0.5 halves it.
struct Fault {
  FaultKind kind = FaultKind::slow_gpu;  // a kind the table says detection power judges (core/fault_kinds.h)
  double size = 0.1;
};

// One benchmark kind's noise, relative standard deviations: of one thing's own speed around the fleet's
// (GPU to GPU, NIC to NIC, link to link), drawn once per trial; and of one timed repetition around it.
struct KindNoise {
  double spread = 0;
  double rep = 0;
};

// The noise model, per benchmark kind (docs/fleet.md's table states where each default comes from):
struct NoiseModel {
  KindNoise gemm{0.02, 0.01};     // GEMM (slow-gpu, flaky, the history's series)
  KindNoise hbm{0.002, 0.005};    // STREAM triad, HBM (slow-mem)
  KindNoise nic{0.02, 0.01};      // a rail's sendrecv between two nodes (slow-nic)
  KindNoise nvlink{0.045, 0.01};  // an NVLink GPU pair inside a node (slow-link)
  double run_noise = 0.01;  // of one GPU's speed from one run to the next (the history's series)
  double flaky_p = 0.3;     // flaky: the chance that each repetition is slow
  // Checkpoint writes (slow-storage): of one rank's timed write, and of one node's storage speed around
  // the fleet's. Stated choices, five and two and a half times the GPU's (docs/fleet.md).
  double storage_rep_noise = 0.05;
  double storage_spread = 0.05;
  // Repetitions per measurement: the run's defaults (harness/benchmarks/defaults.h).
  int gemm_reps = 5, stream_reps = 10, pair_reps = 5, ckpt_reps = 3;
  int runs = 10, step_run = 6;  // the history's series: runs, and the first slow run of throttle-after (1-based)
};
NoiseModel default_noise();  // the figures above, the repetitions from the run's own methodology

struct FleetShape {
  int gpus = 512;
  int gpus_per_node = 8;
  int nodes() const { return gpus / gpus_per_node; }
};

// Identities, the one way every planted and named thing is written (so naming is compared as text).
std::string host_name(int node);                                  // "node0003"
std::string gpu_id(const std::string& host, int local);           // "node0003:gpu5"
std::string rail_id(const std::string& host, int rail);           // "node0003:rail2"
std::string link_id(const std::string& host, int a, int b);       // "node0003:gpu1-gpu4" (a < b)

// An independent random stream of a trial: its seed mixed with a name (and an index), so that what one
// measurement draws never shifts another's, and a planted fault draws from its own stream.
std::mt19937_64 stream(std::uint64_t trial_seed, std::string_view name, std::uint64_t index = 0);
std::uint64_t mix(std::uint64_t a, std::uint64_t b);  // splitmix64 of a and b: trial seeds from the run's seed

// Where a trial's faults sit (drawn from its "where" stream, one place per kind, the same at every size).
struct Places {
  int gemm_gpu = 0, stream_gpu = 0, flaky_gpu = 0, throttle_gpu = 0;  // global GPU index (= rank)
  int nic_node = 0, nic_rail = 0, storage_node = 0;
  int link_node = 0, link_a = 0, link_b = 1;
};
Places draw_places(const FleetShape& shape, std::uint64_t trial_seed);

// The 1-GPU row of GEMM ("gemm") or STREAM triad ("stream"): every GPU's repetitions, each GPU its own
// group, built by the run's row builder and group rows (harness/rows/row_builder.h, row_groups.h).
struct GroupRows {
  std::vector<std::vector<double>> reps;  // by GPU
  std::vector<ResultRow> rows;            // the one combined row, as fleet_outliers takes it
};
GroupRows group_rows(const FleetShape& shape, const NoiseModel& noise, std::uint64_t trial_seed, std::string_view benchmark);
// The row with GPU `gpu`'s repetitions replaced by `reps` (its group rebuilt as the run builds it).
void replace_group(GroupRows& rows, const FleetShape& shape, std::string_view benchmark, int gpu, std::vector<double> reps);
// A fault's repetitions: each slow (x (1 - size)), or for flaky each with probability flaky_p.
std::vector<double> faulty_reps(const std::vector<double>& reps, const Fault& fault, const NoiseModel& noise,
                                std::uint64_t trial_seed);

// The checkpoint.write row at one node's count (gpus_per_node ranks), each node its own group, every
// rank of a node writing its shard at once (concurrent tiling): each rank's repetitions, by rank, and
// the combined row, built by the run's row builder and group rows as group_rows' are.
GroupRows node_rows(const FleetShape& shape, const NoiseModel& noise, std::uint64_t trial_seed);
// The row with node `node`'s ranks' repetitions replaced by `reps` (by the node's local rank).
void replace_node(GroupRows& rows, const FleetShape& shape, int node, const std::vector<std::vector<double>>& reps);

// Rail r's node-pair matrix: node i's NIC of rail r (its GPU of local rank r) against node j's, every
// pair a sendrecv bounded by the slower NIC: base x min(nic_i, nic_j), repetitions around it. Measured
// twice when the first pass names a suspect (the confirming pass of harness/benchmarks/fleet/pair_confirm.h). With
// `slow`, node `slow_node`'s NIC of this rail is (1 - size) of its speed.
PairMatrix rail_matrix(const FleetShape& shape, const NoiseModel& noise, std::uint64_t trial_seed, int rail,
                       const OutlierRule& rule, std::optional<int> slow_node = std::nullopt, double size = 0);

// Node n's GPU-pair matrix: each pair's link its own speed, base x link_ab, repetitions around it.
// With a slow link (a, b), that pair is (1 - size) of its speed.
PairMatrix gpu_pair_matrix(const FleetShape& shape, const NoiseModel& noise, std::uint64_t trial_seed, int node,
                           std::optional<std::pair<int, int>> slow_link = std::nullopt, double size = 0);

// Every GPU's GEMM series over `runs` runs (history::rank_series by GPU, from rank points with the
// readers' per-rank band); each series' key.gpu is its gpu_id.
std::vector<history::Series> gpu_series(const FleetShape& shape, const NoiseModel& noise, std::uint64_t trial_seed);
// The created_utc of run `run` (1-based): the --since of a window starting there.
std::string run_time(int run);

}  // namespace gpuscale::detection
