// The row-field table (row_fields.h). One entry per field; an entry's designated initialisers say only
// what differs from the defaults (a number, in no table, not judged, not stored). Whole numbers that
// files have written as either JSON type (sizes, counts) are numbers here.
#include "results/row_fields.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>

#include <fmt/format.h>

#include "core/error.h"
#include "results/json_int.h"
#include "results/result_file.h"

namespace gpuscale {
namespace {

using nlohmann::json;
using P = FieldPlace;
using T = FieldType;

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
std::optional<double> opt_number(const json& v) {
  if (v.is_null()) return std::nullopt;
  return v.get<double>();
}
std::optional<int> opt_int(const json& v, const char* what) {
  if (v.is_null()) return std::nullopt;
  return json_int(v, what);
}

// The row's members, by name: get writes the member's JSON, set reads it (the schema checked the type).
#define GS_TEXT(member) \
  [](const ResultRow& r) { return json(r.member); }, .set = [](ResultRow& r, const json& v) { v.get_to(r.member); }
#define GS_INT(member)                                 \
  [](const ResultRow& r) { return json(r.member); }, \
      .set = [](ResultRow& r, const json& v) { r.member = json_int(v, #member); }
#define GS_NUMBER(member) \
  [](const ResultRow& r) { return opt(r.member); }, .set = [](ResultRow& r, const json& v) { r.member = opt_number(v); }
#define GS_OPT_INT(member)                                                                          \
  [](const ResultRow& r) { return r.member ? json(*r.member) : json(nullptr); }, .set = [](ResultRow& r, const json& v) { \
    r.member = opt_int(v, #member);                                                                 \
  }

constexpr std::array kFields = {
    // --- The row's identity and context.
    RowField{.name = "benchmark", .type = T::text, .meaning = "registry key of the benchmark, e.g. stream.triad",
             .required = true, .csv = "benchmark", .get = GS_TEXT(benchmark)},
    RowField{.name = "scope", .type = T::text, .meaning = "independent (each rank alone) or collective",
             .required = true, .csv = "scope", .get = GS_TEXT(scope)},
    RowField{.name = "params", .type = T::object, .meaning = "the parameter point (dtype, sizes, op, ...)",
             .required = true, .csv = "params",
             .get = [](const ResultRow& r) { return r.params; }, .set = [](ResultRow& r, const json& v) { r.params = v; }},
    RowField{.name = "gpu_count", .type = T::integer, .meaning = "ranks (GPUs) of each group that measured the point",
             .required = true, .column = "GPUs", .shown = Shown::count, .csv = "gpu_count", .get = GS_INT(gpu_count)},
    RowField{.name = "nodes", .type = T::integer, .meaning = "nodes the gpu_count ranks span", .required = true,
             .csv = "nodes", .history = "nodes", .get = GS_INT(nodes)},
    RowField{.name = "topology", .type = T::text, .meaning = "single, intra-node or inter-node", .required = true,
             .csv = "topology", .get = GS_TEXT(topology)},
    RowField{.name = "unit", .type = T::text, .meaning = "unit of the row's figures (GB/s, TFLOP/s, samples/s)",
             .required = true, .csv = "unit", .get = GS_TEXT(unit)},
    // --- The row's figures.
    RowField{.name = "aggregate", .unit = "row",
             .meaning = "the point's figure: sum over the group's ranks, or the collective's busbw",
             .required = true, .nullable = true, .non_negative = true, .judged = Judged::by_unit, .column = "value",
             .csv = "value", .history = "value", .get = GS_NUMBER(aggregate)},
    RowField{.name = "scaling_efficiency", .meaning = "Scaling efficiency of the point (fraction; docs/results.md)",
             .required = true, .nullable = true, .non_negative = true, .column = "scaling", .shown = Shown::percent,
             .csv = "scaling_efficiency", .openmetrics = "gpuscale_scaling_efficiency_ratio",
             .history = "scaling_efficiency", .get = GS_NUMBER(scaling_efficiency)},
    RowField{.name = "efficiency_basis", .type = T::text, .meaning = "how the efficiency was computed, or why it is null",
             .required = true, .get = GS_TEXT(efficiency_basis)},
    RowField{.name = "expected_peak", .unit = "row", .meaning = "the expected peak per device or link",
             .required = true, .nullable = true, .non_negative = true, .csv = "expected_peak",
             .get = GS_NUMBER(expected_peak)},
    RowField{.name = "fraction_of_peak", .meaning = "Throughput as a fraction of the expected peak",
             .required = true, .nullable = true, .non_negative = true, .judged = Judged::by_unit, .column = "% peak",
             .shown = Shown::percent, .csv = "fraction_of_peak", .openmetrics = "gpuscale_fraction_of_peak_ratio",
             .history = "fraction_of_peak", .get = GS_NUMBER(fraction_of_peak)},
    // After the figures: the tables show validity last.
    RowField{.name = "status", .type = T::text, .meaning = "ok, invalid (a wrong result), failed or skipped",
             .required = true, .column = "valid", .shown = Shown::text, .csv = "status",
             .get = [](const ResultRow& r) { return json(row_status_name(r.status)); },
             .set =
                 [](ResultRow& r, const json& v) {
                   const auto s = parse_row_status(v.get<std::string>());
                   if (!s) throw json::other_error::create(501, "unknown row status", &v);
                   r.status = *s;
                 }},
    RowField{.name = "peak_source", .type = T::text, .meaning = "where the peak came from, or why it is unknown",
             .required = true, .get = GS_TEXT(peak_source)},
    RowField{.name = "metrics", .type = T::object, .meaning = "row-level figures a benchmark adds (the metric fields below)",
             .required = true, .get = [](const ResultRow& r) { return r.metrics.is_object() ? r.metrics : json::object(); },
             .set = [](ResultRow& r, const json& v) { r.metrics = v; }},
    RowField{.name = "errors", .type = T::array, .meaning = "why the row is not ok, one line each", .required = true,
             .get = [](const ResultRow& r) { return json(r.errors); },
             .set = [](ResultRow& r, const json& v) { v.get_to(r.errors); }},
    RowField{.name = "attempt", .type = T::integer, .meaning = "the run attempt that measured it (run --resume)",
             .nullable = true, .get = GS_OPT_INT(attempt)},
    RowField{.name = "input", .type = T::integer, .meaning = "merge: index into merged_from of its file",
             .nullable = true, .get = GS_OPT_INT(input)},
    // --- The row's structure, laid out by the row writer (results/result_row_v2.cpp).
    RowField{.name = "ranks", .type = T::structure, .meaning = "each rank's value, validity and metrics, as columns",
             .required = true},
    RowField{.name = "spread", .type = T::structure, .meaning = "the repetition spread: compare's noise band"},
    RowField{.name = "groups", .type = T::structure, .meaning = "every group of the tiled count (docs/fleet.md)"},
    RowField{.name = "group_summary", .type = T::structure, .meaning = "count, min, median, max, spread of the groups"},
    RowField{.name = "flags", .type = T::structure, .meaning = "why the figure is not what it seems (above_peak, ...)"},
    RowField{.name = "idle_ranks", .type = T::structure, .meaning = "ranks that measured nothing at this count"},
    RowField{.name = "matrices", .type = T::structure, .meaning = "the fleet benchmarks' pair matrices"},
    // --- Row metrics: what the benchmarks add, read by analysis.
    RowField{.name = "size_bytes", .place = P::row_metric, .unit = "B",
             .meaning = "collectives: bytes per rank's buffer as measured (nccl-tests' size)", .non_negative = true},
    RowField{.name = "count", .place = P::row_metric,
             .meaning = "collectives: elements per buffer (nccl-tests' count)", .non_negative = true},
    RowField{.name = "time_us", .place = P::row_metric, .unit = "us",
             .meaning = "collectives: time of one operation (the group's reduction of the ranks' times)",
             .non_negative = true, .csv = "time_us", .history = "time_us"},
    RowField{.name = "algbw", .place = P::row_metric, .unit = "GB/s",
             .meaning = "collectives: size over time; null at one rank, where nothing crosses a link",
             .nullable = true, .non_negative = true, .csv = "algbw"},
    RowField{.name = "busbw", .place = P::row_metric, .unit = "GB/s",
             .meaning = "collectives: algbw times the bus factor; null at one rank", .nullable = true,
             .non_negative = true, .csv = "busbw"},
    RowField{.name = "bus_factor", .place = P::row_metric, .meaning = "collectives: busbw over algbw at this count",
             .non_negative = true},
    RowField{.name = "busbw_note", .place = P::row_metric, .type = T::text,
             .meaning = "collectives: why busbw is not what the links carried (NVLS)"},
    RowField{.name = "init_s", .place = P::row_metric, .unit = "s",
             .meaning = "seconds the row spent making communicators: its GPU count's on the count's first row that needs "
                        "one (every rank waits for the last; on CUDA a split from the job's communicator, which the run's "
                        "first such row also makes), and the point's own (train-step's, one per layout dimension)",
             .non_negative = true},
    RowField{.name = "wrong", .place = P::row_metric, .meaning = "values the check found wrong (all ranks)",
             .non_negative = true},
    // Per-iteration timing (harness/benchmarks/iter_timing.h): nccl-tests' -I summary over the slowest rank
    // of each iteration of the -I pass, after -K's skipped ones.
    RowField{.name = "iter_p50_us", .place = P::row_metric, .unit = "us",
             .meaning = "collectives: the median iteration of the per-iteration pass, each iteration its slowest rank's "
                        "time (nccl-tests' p50_us)",
             .non_negative = true, .csv = "iter_p50_us"},
    RowField{.name = "iter_p99_us", .place = P::row_metric, .unit = "us",
             .meaning = "collectives: the 99th percentile (nearest rank, nccl-tests' i_p99) of those iterations",
             .non_negative = true, .csv = "iter_p99_us"},
    RowField{.name = "iter_max_us", .place = P::row_metric, .unit = "us",
             .meaning = "collectives: the slowest of those iterations (nccl-tests' i_max)", .non_negative = true,
             .csv = "iter_max_us"},
    RowField{.name = "iter_cv_pct", .place = P::row_metric, .unit = "%",
             .meaning = "collectives: their coefficient of variation, population stdev over mean (nccl-tests' i_cv%); "
                        "above 5 the row is flagged iter_noisy",
             .non_negative = true, .csv = "iter_cv_pct"},
    RowField{.name = "iter_spikes", .place = P::row_metric, .type = T::integer,
             .meaning = "collectives: those iterations over 1.5 x iter_p50_us (the row is then flagged iter_spikes)",
             .non_negative = true},
    RowField{.name = "iter_skipped", .place = P::row_metric, .type = T::integer,
             .meaning = "collectives: leading iterations of the pass left out of the summary (-K/--skip-iters)",
             .non_negative = true},
    RowField{.name = "iter_straggler_rank", .place = P::row_metric, .type = T::integer,
             .meaning = "collectives: the world rank slowest in the most of those iterations (ties: the lower rank)",
             .non_negative = true},
    RowField{.name = "iter_straggler_share", .place = P::row_metric,
             .meaning = "collectives: the fraction of those iterations iter_straggler_rank was the slowest in",
             .non_negative = true},
    RowField{.name = "iter_times_us", .place = P::row_metric, .type = T::array, .unit = "us",
             .meaning = "collectives: every iteration of the pass, skipped ones included, its slowest rank's time "
                        "(nccl-tests' times_us)"},
    RowField{.name = "iter_rank_times_us", .place = P::row_metric, .type = T::array, .unit = "us",
             .meaning = "collectives, the whole job's rows of a job of 64 ranks or fewer: each rank's own times of the "
                        "pass, in the row's rank order (nccl-tests' per_process_max_times_us)"},
    RowField{.name = "step_time_us", .place = P::row_metric, .unit = "us", .meaning = "dp-step, train-step: time of one step",
             .non_negative = true, .history = "step_time_us"},
    RowField{.name = "exposed_comm_us", .place = P::row_metric, .unit = "us",
             .meaning = "dp-step: communication time not hidden behind compute", .non_negative = true},
    RowField{.name = "compute_time_us", .place = P::row_metric, .unit = "us",
             .meaning = "dp-step: compute time of one step", .non_negative = true},
    RowField{.name = "gradient_bytes", .place = P::row_metric, .unit = "B",
             .meaning = "dp-step: gradient bytes all-reduced per step", .non_negative = true},
    RowField{.name = "phase_us", .place = P::row_metric, .type = T::object, .unit = "us",
             .meaning = "train-step: each phase's time on the slowest rank (compute, each pattern's communication, "
                        "bubble, wait)",
             .history = "phase_us"},
    RowField{.name = "checkpoint_s", .place = P::row_metric, .unit = "s",
             .meaning = "checkpoint.write, checkpoint.read: the checkpoint's time, its slowest rank's",
             .non_negative = true, .history = "checkpoint_s"},
    RowField{.name = "checkpoint_gb_s", .place = P::row_metric, .unit = "GB/s",
             .meaning = "checkpoint.write, checkpoint.read: the checkpoint's bytes over checkpoint_s (gpuscale plan's "
                        "storage bandwidth)",
             .non_negative = true, .history = "checkpoint_gb_s"},
    RowField{.name = "checkpoint_total_bytes", .place = P::row_metric, .unit = "B",
             .meaning = "checkpoint: the whole checkpoint at this count (--ckpt-size, or --ckpt-rank-size x the count)",
             .non_negative = true},
    RowField{.name = "preset_checkpoint_s", .place = P::row_metric, .type = T::object, .unit = "s",
             .meaning = "checkpoint.write: each training preset's checkpoint (training/model_spec.h: 14 bytes per bf16 "
                        "weight) over this row's checkpoint_gb_s: derived from the measured bandwidth, not measured at "
                        "that size"},
    RowField{.name = "checkpoint_memory", .place = P::row_metric, .type = T::text,
             .meaning = "checkpoint: where the shard lives: host (the CPU backend) or pinned_staging (GPU memory, each "
                        "chunk copied through a pinned host buffer, the copy timed)"},
    RowField{.name = "fs_type", .place = P::row_metric, .type = T::text,
             .meaning = "checkpoint: the file system type of --ckpt-dir (mountinfo)"},
    RowField{.name = "mount_point", .place = P::row_metric, .type = T::text,
             .meaning = "checkpoint: the mount point --ckpt-dir is on"},
    RowField{.name = "mount_options", .place = P::row_metric, .type = T::text,
             .meaning = "checkpoint: that mount's options"},
    RowField{.name = "cache_possible", .place = P::row_metric, .type = T::text,
             .meaning = "checkpoint.read: why a timed read may have come from the page cache"},
    RowField{.name = "best_aggregate_gb_s", .place = P::row_metric, .unit = "GB/s",
             .meaning = "stream: sum of the ranks' best repetitions", .non_negative = true},
    RowField{.name = "once_counted_gbps", .place = P::row_metric, .unit = "GB/s",
             .meaning = "copy.d2d: the group's figure with each byte counted once (nvbandwidth's)",
             .non_negative = true},
    RowField{.name = "rep_order", .place = P::row_metric, .type = T::text,
             .meaning = "how the groups' timed repetitions were ordered in time: concurrent (every group at once), "
                        "interleaved (groups in turns, one repetition a turn: every group's first, then every group's "
                        "second ...) or blocked (each group all its repetitions in its turn; the fleet's pairs: each "
                        "pair in its round) (docs/fleet.md)"},
    RowField{.name = "energy_j", .place = P::row_metric, .unit = "J",
             .meaning = "energy of the row's GPUs (NVML, each GPU once) or nodes (RAPL) over its timed repetitions "
                        "(the whole point for a benchmark that marks none); null when a counter could not say "
                        "(energy_invalid)",
             .nullable = true, .non_negative = true, .csv = "energy_j", .history = "energy_j"},
    RowField{.name = "avg_power_w", .place = P::row_metric, .unit = "W",
             .meaning = "sum of the row's GPUs' or nodes' average power over its timed repetitions (the whole "
                        "point for a benchmark that marks none)",
             .nullable = true,
             .non_negative = true, .column = "W", .csv = "avg_power_w",
             .openmetrics = "gpuscale_avg_power_watts", .history = "avg_power_w"},
    RowField{.name = "work_per_j", .place = P::row_metric,
             .meaning = "the row's figure per watt: work per joule (TFLOP/J, GB/J, tokens/J; work_per_j_unit)",
             .non_negative = true, .column = "per J", .csv = "work_per_j",
             .openmetrics = "gpuscale_work_per_joule", .history = "work_per_j"},
    RowField{.name = "work_per_j_unit", .place = P::row_metric, .type = T::text,
             .meaning = "the unit of work_per_j: the row's unit per second made per joule"},
    RowField{.name = "energy_scope", .place = P::row_metric, .type = T::text,
             .meaning = "gpu (each rank's GPU, NVML) or node (each host's CPU packages once, RAPL)"},
    RowField{.name = "energy_invalid", .place = P::row_metric, .type = T::text,
             .meaning = "why energy_j is null (no counter, not readable, reset while measuring)"},
    RowField{.name = "energy_window", .place = P::row_metric, .type = T::text,
             .meaning = "what energy_j covers: timed (the timed repetitions) or point (the whole point, setup and "
                        "warm-up included, for a benchmark that marks no timed repetitions)"},
    RowField{.name = "energy_shared", .place = P::row_metric, .type = T::text,
             .meaning = "the GPUs whose energy counter several ranks read (MIG slices read the whole GPU's), "
                        "each counted once"},
    // --- Rank metrics (columns of the rank table).
    RowField{.name = "energy_j", .place = P::rank_metric, .unit = "J",
             .meaning = "the rank's GPU's (or its node's) energy over the point, where its counter could say",
             .non_negative = true},
    RowField{.name = "avg_power_w", .place = P::rank_metric, .unit = "W",
             .meaning = "the rank's GPU's (or its node's) average power over the point, where its counter could say",
             .non_negative = true},
    RowField{.name = "best_gb_s", .place = P::rank_metric, .unit = "GB/s",
             .meaning = "stream: the rank's best repetition", .non_negative = true},
    RowField{.name = "best_time_us", .place = P::rank_metric, .unit = "us",
             .meaning = "stream: the time of the rank's best repetition", .non_negative = true},
    RowField{.name = "max_time_us", .place = P::rank_metric, .unit = "us",
             .meaning = "imported BabelStream: the time of the rank's slowest counted repetition", .non_negative = true},
    RowField{.name = "mean_time_us", .place = P::rank_metric, .unit = "us",
             .meaning = "imported BabelStream: the mean time of the rank's counted repetitions", .non_negative = true},
    RowField{.name = "cpu_time_us", .place = P::row_metric, .unit = "us",
             .meaning = "imported nccl-tests -C: its cputime column, the host's time per operation", .non_negative = true},
    RowField{.name = "import_input", .place = P::row_metric,
             .meaning = "imported files: index into imported.inputs of the file the row came from", .non_negative = true},
    RowField{.name = "time_us", .place = P::rank_metric, .unit = "us",
             .meaning = "collectives: the rank's own time of one operation", .non_negative = true},
    RowField{.name = "wrong", .place = P::rank_metric, .meaning = "values the rank's check found wrong",
             .non_negative = true},
    RowField{.name = "step_time_us", .place = P::rank_metric, .unit = "us",
             .meaning = "dp-step: the rank's own step time", .non_negative = true},
    RowField{.name = "comm_memory_bytes", .place = P::rank_metric, .unit = "B",
             .meaning = "the most device memory the rank's communicators held during the point (the job's, its GPU "
                        "count's and the point's own), each measured as free memory before its creation less after; "
                        "CUDA only",
             .non_negative = true},
};
#undef GS_TEXT
#undef GS_INT
#undef GS_NUMBER
#undef GS_OPT_INT

const RowField& named(std::string_view name, FieldPlace place) {
  const RowField* f = find_row_field(name, place);
  if (!f) throw Error(fmt::format("internal: no row field {}", name));
  return *f;
}

}  // namespace

std::span<const RowField> row_fields() { return kFields; }

const RowField* find_row_field(std::string_view name, FieldPlace place) {
  for (const auto& f : kFields)
    if (f.name == name && f.place == place) return &f;
  return nullptr;
}

namespace fields {
const RowField& gpu_count = named("gpu_count", P::row);
const RowField& status = named("status", P::row);
const RowField& aggregate = named("aggregate", P::row);
const RowField& scaling_efficiency = named("scaling_efficiency", P::row);
const RowField& fraction_of_peak = named("fraction_of_peak", P::row);
const RowField& expected_peak = named("expected_peak", P::row);
const RowField& size_bytes = named("size_bytes", P::row_metric);
const RowField& count = named("count", P::row_metric);
const RowField& time_us = named("time_us", P::row_metric);
const RowField& algbw = named("algbw", P::row_metric);
const RowField& busbw = named("busbw", P::row_metric);
const RowField& bus_factor = named("bus_factor", P::row_metric);
const RowField& busbw_note = named("busbw_note", P::row_metric);
const RowField& wrong = named("wrong", P::row_metric);
const RowField& step_time_us = named("step_time_us", P::row_metric);
const RowField& exposed_comm_us = named("exposed_comm_us", P::row_metric);
const RowField& compute_time_us = named("compute_time_us", P::row_metric);
const RowField& gradient_bytes = named("gradient_bytes", P::row_metric);
const RowField& phase_us = named("phase_us", P::row_metric);
const RowField& avg_power_w = named("avg_power_w", P::row_metric);
const RowField& checkpoint_gb_s = named("checkpoint_gb_s", P::row_metric);
const RowField& iter_p50_us = named("iter_p50_us", P::row_metric);
const RowField& iter_p99_us = named("iter_p99_us", P::row_metric);
const RowField& iter_max_us = named("iter_max_us", P::row_metric);
const RowField& iter_cv_pct = named("iter_cv_pct", P::row_metric);
const RowField& iter_spikes = named("iter_spikes", P::row_metric);
const RowField& iter_skipped = named("iter_skipped", P::row_metric);
const RowField& iter_straggler_rank = named("iter_straggler_rank", P::row_metric);
const RowField& iter_straggler_share = named("iter_straggler_share", P::row_metric);
const RowField& iter_times_us = named("iter_times_us", P::row_metric);
const RowField& iter_rank_times_us = named("iter_rank_times_us", P::row_metric);
}  // namespace fields

}  // namespace gpuscale
