#include "harness/options/run_option_table.h"
#include "harness/options/run_option_values.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "core/units.h"

namespace gpuscale {

using nlohmann::json;

std::string RunOption::flag() const {
  const auto comma = names.rfind(',');
  return comma == std::string::npos ? names : names.substr(comma + 1);
}

std::string RunOption::what() const {
  std::string out = names;
  std::replace(out.begin(), out.end(), ',', '/');
  return out;
}

namespace {

// --- From command-line text (the messages name the option as `what` does). ---

template <auto Field>
void size_text(RunOptions& o, const std::string& t, const std::string& what) {
  o.*Field = parse_size(t, what);
}

template <auto Field>
void count_text(RunOptions& o, const std::string& t, const std::string& what) {
  o.*Field = parse_positive_int(t, what);
}

template <auto Field>
void string_text(RunOptions& o, const std::string& t, const std::string&) {
  o.*Field = t;
}

template <auto Field>
void switch_text(RunOptions& o, const std::string& t, const std::string&) {
  o.*Field = t == "true";
}

// 0 (off), or a positive whole number of seconds.
double seconds_text(const std::string& t, const std::string& what) {
  return t == "0" ? 0.0 : static_cast<double>(parse_positive(t, what));
}

double rate_text(const std::string& text, const std::string& what) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v > 0 && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  throw Error(fmt::format("invalid {} '{}': expected a positive number of GB/s", what, text));
}

// --- To and from plan.options. ---

template <typename T>
json opt_json(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

template <auto Field>
json record_value(const RunOptions& o) {
  return opt_json(o.*Field);
}

std::optional<std::uint64_t> positive_u64_or_null(const json& j) {
  if (j.is_null()) return std::nullopt;
  if (!j.is_number_unsigned() || j.get<std::uint64_t>() == 0) throw BadRecordedValue{"a positive integer or null"};
  return j.get<std::uint64_t>();
}

std::optional<int> int_or_null(const json& j, int min) {
  if (j.is_null()) return std::nullopt;
  if (!j.is_number_integer() || j.get<long long>() < min || j.get<long long>() > INT_MAX)
    throw BadRecordedValue{fmt::format("an integer from {} to {} or null", min, INT_MAX)};
  return static_cast<int>(j.get<long long>());
}


template <auto Field>
void adopt_size(RunOptions& o, const json& j) {
  o.*Field = positive_u64_or_null(j);
}

template <auto Field, int Min>
void adopt_int(RunOptions& o, const json& j) {
  o.*Field = int_or_null(j, Min);
}

// --- The options whose text needs more than one parser call. ---

void parse_backend(RunOptions& o, const std::string& t, const std::string&) {
  if (t != "cpu" && t != "cuda" && t != "auto") throw Error(fmt::format("invalid --backend '{}': use cpu, cuda or auto", t));
  o.backend = t;
}

void parse_stepfactor(RunOptions& o, const std::string& t, const std::string& what) {
  o.step_factor = static_cast<std::uint64_t>(parse_positive(t, what));
  if (*o.step_factor < 2) throw Error(fmt::format("invalid {} '{}': must be at least 2", what, t));
}

// After the last size option: a sweep from -b to -e needs -b <= -e.
void check_size_range(const RunOptions& o, const OptionText& text) {
  if (o.min_bytes && o.max_bytes && *o.min_bytes > *o.max_bytes)
    throw Error(fmt::format("invalid sizes: -b {} is larger than -e {}", text("min_bytes"), text("max_bytes")));
}

void parse_seed(RunOptions& o, const std::string& t, const std::string& what) {
  o.seed = static_cast<std::uint64_t>(parse_positive(t, what));
  if (*o.seed >= (1ULL << 53)) throw Error(fmt::format("invalid {} '{}': must be below 2^53", what, t));
}


std::vector<RunOption> make_table() {
  using O = RunOptions;
  const auto shapes = Recorded::shapes;
  const auto label = Recorded::label;
  const auto top = Recorded::top_level;
  std::vector<RunOption> t;
  auto add = [&](RunOption e) -> RunOption& { return t.emplace_back(std::move(e)); };

  add({.names = "--backend", .key = "backend", .help = "cpu, cuda or auto (CUDA when a GPU is visible)",
       .initial = "auto", .parse = parse_backend, .recorded = top});
  add({.names = "--quick", .key = "quick", .help = "a small plan: seconds, for smoke tests and CI", .is_switch = true,
       .parse = switch_text<&O::quick>, .recorded = shapes, .record = [](const O& o) { return json(o.quick); },
       .adopt = [](O& o, const json& j) {
         if (!j.is_boolean()) throw BadRecordedValue{"true or false"};
         o.quick = j.get<bool>();
       }});
  add({.names = "--benchmarks", .key = "benchmarks",
       // cli/cmd_run.cpp appends the registry's groups (Registry::groups_text), the one list of them.
       .help = "comma list of benchmark keys or groups",
       // The names are checked against the registry by the command (cli/cmd_run.cpp), not here: resume
       // and its fuzzer read this table without linking the benchmarks.
       .parse = [](O& o, const std::string& s, const std::string& what) { o.benchmarks = split_list(s, what); },
       .recorded = shapes, .record = [](const O& o) { return json(o.benchmarks); },
       .adopt = [](O& o, const json& j) { o.benchmarks = strings(j); }});
  add({.names = "-d,--dtypes", .key = "dtypes",
       .help = fmt::format("comma list of element types ({}; nccl-tests' names too: gpuscale list --dtypes), or all",
                           dtype_names_text()),
       .parse = parse_dtypes,
       .recorded = shapes, .record = record_dtypes, .adopt = adopt_dtypes});
  add({.names = "-b,--minbytes", .key = "min_bytes", .help = "collectives: smallest message size (K/M/G suffixes)",
       .parse = size_text<&O::min_bytes>, .recorded = shapes, .record = record_value<&O::min_bytes>,
       .adopt = adopt_size<&O::min_bytes>});
  add({.names = "-e,--maxbytes", .key = "max_bytes", .help = "collectives: largest message size (the sweep's last size is the last step at or below it, as nccl-tests)",
       .parse = size_text<&O::max_bytes>, .recorded = shapes, .record = record_value<&O::max_bytes>,
       .adopt = adopt_size<&O::max_bytes>});
  add({.names = "-f,--stepfactor", .key = "step_factor", .help = "collectives: multiply the size by this factor (default 2; 32 with --quick)",
       .parse = parse_stepfactor, .recorded = shapes, .record = record_value<&O::step_factor>,
       .adopt = adopt_size<&O::step_factor>});
  add({.names = "-i,--stepbytes", .key = "step_bytes", .help = "collectives: add this many bytes instead",
       .parse = size_text<&O::step_bytes>, .check = check_size_range, .recorded = shapes,
       .record = record_value<&O::step_bytes>, .adopt = adopt_size<&O::step_bytes>});
  add({.names = "-n,--iters", .key = "iters", .help = "collectives: operations per timed repetition",
       .parse = count_text<&O::iters>, .recorded = shapes, .record = record_value<&O::iters>,
       .adopt = adopt_int<&O::iters, 1>});
  add_iter_timing_options(t);  // -I/--iter-timing, -K/--skip-iters (harness/benchmarks/iter_timing_options.cpp)
  add({.names = "-w,--warmup", .key = "warmup", .help = "warm-up passes (collectives: operations) before timing",
       .parse = [](O& o, const std::string& s, const std::string& what) {
         o.warmup = s == "0" ? 0 : parse_positive_int(s, what);
       },
       .recorded = shapes, .record = record_value<&O::warmup>, .adopt = adopt_int<&O::warmup, 0>});
  add({.names = "-c,--check", .key = "check",
       .help = "nccl-tests' check flag, 1 or 0: gpuscale checks every measurement either way (0 leaves a note)",
       .parse = parse_check});
  add({.names = "--reps", .key = "reps", .help = "timed repetitions; statistics are over these",
       .parse = count_text<&O::reps>, .recorded = shapes, .record = record_value<&O::reps>,
       .adopt = adopt_int<&O::reps, 1>});
  add({.names = "--ops", .key = "ops", .help = "collectives: reduction ops (sum, prod, min, max, avg)", .parse = parse_ops,
       .recorded = shapes, .record = record_ops, .adopt = adopt_ops});
  add({.names = "--skew", .key = "skews",
       .help = "alltoallv: how each rank's data spreads over its peers, uniform, zipf:S or file:PATH (one row of "
               "weights, one per receiving rank; measured at that many ranks only) (default uniform,zipf:1.2)",
       .parse = parse_skews, .recorded = shapes, .record = record_skews, .adopt = adopt_skews});
  add({.names = "--placement", .key = "placements",
       .help = fmt::format("collectives: {} (default both)", join_values(placement_names(), ", ", ", ")),
       .parse = parse_placements, .recorded = shapes, .record = record_placements, .adopt = adopt_placements});
  add({.names = "--array-size", .key = "array_bytes", .help = "STREAM: bytes per array (default 4x LLC / 8x L2)",
       .parse = size_text<&O::array_bytes>, .recorded = shapes, .record = record_value<&O::array_bytes>,
       .adopt = adopt_size<&O::array_bytes>});
  add({.names = "--gemm-shapes", .key = "gemm_shapes", .help = "GEMM: comma list of N or MxNxK[:TN]",
       .parse = [](O& o, const std::string& s, const std::string& what) {
         for (const auto& shape : split_list(s, what)) o.gemm_shapes.push_back(parse_gemm_shape(shape));
       },
       .recorded = shapes, .record = record_gemm_shapes, .adopt = adopt_gemm_shapes});
  add({.names = "--copy-size", .key = "copy_bytes", .help = "copy benchmarks: bytes per copy (default 256M)",
       .parse = size_text<&O::copy_bytes>, .recorded = shapes, .record = record_value<&O::copy_bytes>,
       .adopt = adopt_size<&O::copy_bytes>});
  add({.names = "--peaks", .key = "peaks_file", .help = "JSON file of GPU models adding to / replacing the built-in peaks",
       // cli/cmd_run.cpp loads the file right after parsing, so a malformed one stops the run there.
       .parse = [](O& o, const std::string& s, const std::string&) { o.backend_options.peaks_file = s; },
       .recorded = label, .record = [](const O& o) {
         return o.backend_options.peaks_file.empty() ? json(nullptr) : json(o.backend_options.peaks_file);
       }});
  add({.names = "--threads", .key = "threads", .help = "CPU backend: threads per rank (default cores / ranks on the node)",
       .parse = [](O& o, const std::string& s, const std::string& what) { o.backend_options.threads = parse_thread_count(s, what, visible_cores()); },
       .recorded = shapes, .record = [](const O& o) { return json(o.backend_options.threads); },
       .adopt = adopt_threads});
  add({.names = "--cluster", .key = "cluster", .help = "cluster name for the result file", .parse = string_text<&O::cluster>});
  add({.names = "-o,--output", .key = "output",
       .help = "result file (default results/<cluster>-<UTC time>[-<jobid>].json); - writes the JSON to stdout "
               "and everything else to stderr",
       .parse = parse_output});
  add({.names = "-q,--quiet", .key = "quiet", .help = "no progress lines and no summary (errors and warnings still)",
       .is_switch = true, .parse = switch_text<&O::quiet>});
  add({.names = "--seed", .key = "seed", .help = "seed of the random inputs (default: random, recorded)",
       .parse = parse_seed, .recorded = top});
  add({.names = "-a,--time-reduce", .key = "time_reduce",
       .help = fmt::format("collectives: how ranks' times combine: {}", join_values(time_reduce_names(), ", ", ", ")),
       .initial = "avg", .parse = parse_time_reduce, .recorded = shapes,
       .record = [](const O& o) { return json(o.time_reduce); }, .adopt = adopt_time_reduce});
  add({.names = "--link-peak", .key = "link_peak", .help = "GB/s: expected intra-node link peak for collectives",
       .parse = [](O& o, const std::string& s, const std::string& what) { o.backend_options.link_peak = rate_text(s, what); },
       .recorded = label, .record = [](const O& o) { return opt_json(o.backend_options.link_peak); }});
  add({.names = "--net-peak", .key = "net_peak", .help = "GB/s: expected inter-node link peak for collectives",
       .parse = [](O& o, const std::string& s, const std::string& what) { o.backend_options.net_peak = rate_text(s, what); },
       .recorded = label, .record = [](const O& o) { return opt_json(o.backend_options.net_peak); }});
  add({.names = "-T,--timeout", .key = "timeout_s",
       .help = "NCCL: seconds a collective may wait before its communicator is aborted (default 300, 0 = never)",
       .parse = [](O& o, const std::string& s, const std::string& what) { o.backend_options.timeout_s = seconds_text(s, what); },
       .recorded = label, .record = [](const O& o) { return json(o.backend_options.timeout_s); }});
  add({.names = "--transports", .key = "transports",
       .help = fmt::format("CUDA collectives: {} (MPI on GPU buffers; default nccl, plus mpi when CUDA-aware)",
                           join_values(transport_values(), ", ", " and/or ")),
       .parse = parse_transports, .recorded = shapes, .record = [](const O& o) { return json(o.transports); },
       .adopt = adopt_transports});
  add({.names = "--dp-width", .key = "dp_width", .help = "dp-step: layer width (default 8192 on CUDA, 1024 on the CPU)",
       .parse = [](O& o, const std::string& s, const std::string& what) {
         o.dp_width = static_cast<std::uint64_t>(parse_positive_int(s, what));
       },
       .recorded = shapes, .record = record_value<&O::dp_width>, .adopt = adopt_size<&O::dp_width>});
  add({.names = "--dp-depth", .key = "dp_depth", .help = "dp-step: layers (default 4)", .parse = count_text<&O::dp_depth>,
       .recorded = shapes, .record = record_value<&O::dp_depth>, .adopt = adopt_int<&O::dp_depth, 1>});
  add({.names = "--dp-batch", .key = "dp_batch",
       .help = "dp-step: samples per rank per step (default 8192 on CUDA, 256 on the CPU)",
       .parse = [](O& o, const std::string& s, const std::string& what) {
         o.dp_batch = static_cast<std::uint64_t>(parse_positive_int(s, what));
       },
       .recorded = shapes, .record = record_value<&O::dp_batch>, .adopt = adopt_size<&O::dp_batch>});
  add({.names = "--dp-bucket", .key = "dp_bucket", .help = "dp-step: gradient bucket cap (default 25M, DDP's)",
       .parse = size_text<&O::dp_bucket>, .recorded = shapes, .record = record_value<&O::dp_bucket>,
       .adopt = adopt_size<&O::dp_bucket>});
  // train-step (docs/training.md).
  add({.names = "--model", .key = "models",
       .help = "train-step: comma list of presets (llama3-8b, llama3-70b, mixtral-8x7b) or model JSON files "
               "(default llama3-8b and mixtral-8x7b)",
       .parse = [](O& o, const std::string& s, const std::string& what) { o.models = split_list(s, what); },
       .recorded = shapes, .record = [](const O& o) { return json(o.models); },
       .adopt = [](O& o, const json& j) { o.models = strings(j); }});
  add({.names = "--layout", .key = "layouts",
       .help = "train-step: parallel layouts separated by ';', each a comma list of dp, fsdp, tp=K, pp=K, ep=K "
               "(default dp;fsdp;tp=2;pp=2 for a dense model, ep=4;ep=8 for an MoE one)",
       .parse = parse_layouts, .recorded = shapes, .record = [](const O& o) { return json(o.layouts); },
       .adopt = adopt_layouts});
  add({.names = "--layers", .key = "layers", .help = "train-step: layers of every model (default its own; --quick 2)",
       .parse = count_text<&O::layers>, .recorded = shapes, .record = record_value<&O::layers>,
       .adopt = adopt_int<&O::layers, 1>});
  add({.names = "--scaling", .key = "scalings",
       .help = "train-step: weak (each data-parallel rank's batch fixed: the default), strong (the global batch of "
               "the largest GPU count held, by gradient accumulation at smaller ones), or weak,strong",
       .parse = [](O& o, const std::string& s, const std::string& what) {
         for (const auto& v : split_list(s, what)) {
           if (v != "weak" && v != "strong")
             throw Error(fmt::format("invalid {} '{}': expected weak, strong or weak,strong", what, terminal_quote(v)));
           if (std::find(o.scalings.begin(), o.scalings.end(), v) == o.scalings.end()) o.scalings.push_back(v);
         }
       },
       .recorded = shapes, .record = [](const O& o) { return json(o.scalings); },
       .adopt = [](O& o, const json& j) {
         o.scalings = strings(j);
         for (const auto& v : o.scalings)
           if (v != "weak" && v != "strong") throw BadRecordedValue{"train-step scalings, weak or strong"};
       }});
  add_burn_options(t);        // the burn-in's --burn, --window, --duration (harness/benchmarks/burn/)
  add_checkpoint_options(t);  // the checkpoint storage benchmark's --ckpt-dir, --ckpt-size (harness/benchmarks/checkpoint/)
  // Fleet coverage (docs/fleet.md).
  add({.names = "--tiling", .key = "tiling",
       .help = "at each GPU count k: concurrent (every disjoint group of k ranks at once), sequential (one group "
               "after another) or first (only the first k ranks)",
       .initial = "concurrent",
       .parse = [](O& o, const std::string& s, const std::string&) { o.tiling = parse_tiling_mode(s); },
       .recorded = shapes, .record = [](const O& o) { return json(tiling_mode_name(o.tiling)); },
       .adopt = [](O& o, const json& j) {
         try {
           if (!j.is_string()) throw Error("");
           o.tiling = parse_tiling_mode(j.get<std::string>());
         } catch (const Error&) {
           throw BadRecordedValue{"\"concurrent\", \"sequential\" or \"first\""};
         }
       }});
  add({.names = "--rep-order", .key = "rep_order",
       .help = "where groups take turns (--tiling sequential): interleaved (every group's first timed repetition, "
               "then every group's second ...: the machine's drift falls on all groups alike; STREAM, GEMM, copies) or "
               "blocked (each group all its repetitions in its turn, in two passes)",
       .initial = "interleaved",
       .parse = [](O& o, const std::string& s, const std::string&) { o.rep_order = parse_rep_order(s); },
       .recorded = shapes, .record = [](const O& o) { return json(rep_order_name(o.rep_order)); },
       .adopt = [](O& o, const json& j) {
         try {
           if (!j.is_string()) throw Error("");
           o.rep_order = parse_rep_order(j.get<std::string>());
         } catch (const Error&) {
           throw BadRecordedValue{"\"interleaved\" or \"blocked\""};
         }
       }});
  add({.names = "--outlier", .key = "outlier",
       .help = "fleet: a fixed floor: name nothing less than this fraction below the median (default: none; the "
               "run's own noise, --false-alarm and --min-effect set the bar)",
       .parse = [](O& o, const std::string& s, const std::string& n) { o.outlier = parse_outlier_fraction(s, n); },
       .recorded = label, .record = [](const O& o) { return json(o.outlier); }});
  add({.names = "--min-effect", .key = "min_effect",
       .help = "fleet: name no group, node, pair or GPU less than this fraction below the median, however quiet the "
               "noise (default 0.03)",
       .parse = [](O& o, const std::string& s, const std::string& n) { o.min_effect = parse_outlier_fraction(s, n); },
       .recorded = label, .record = [](const O& o) { return json(o.min_effect); }});
  add({.names = "--false-alarm", .key = "false_alarm",
       .help = "fleet: the chance that a clean run names anything, over all it judges (default 0.01)",
       .parse = [](O& o, const std::string& s, const std::string& n) { o.false_alarm = parse_outlier_fraction(s, n); },
       .recorded = label, .record = [](const O& o) { return json(o.false_alarm); }});
  add({.names = "--pairs-rounds", .key = "pairs_rounds",
       .help = "fleet pairs: measure this many seeded random rounds of the node-pair tournament (default: all, "
               "every pair)",
       .parse = [](O& o, const std::string& s, const std::string&) { o.pairs_rounds = parse_pairs_rounds(s); },
       .recorded = shapes, .record = record_value<&O::pairs_rounds>, .adopt = adopt_int<&O::pairs_rounds, 1>});
  add({.names = "--fail-on-outliers", .key = "fail_on_outliers",
       .help = "exit 1 when the run names an outlier (a Slurm acceptance job fails on it)", .is_switch = true,
       .parse = switch_text<&O::fail_on_outliers>, .recorded = label,
       .record = [](const O& o) { return json(o.fail_on_outliers); }});
  add({.names = "--rank-stats", .key = "rank_stats",
       .help = "write each rank's repetition statistics (n, median, min, max, mean, stddev) in every row; "
               "without it a row keeps only its spread (docs/results.md)",
       .is_switch = true, .parse = switch_text<&O::rank_stats>, .recorded = label,
       .record = [](const O& o) { return json(o.rank_stats); }});
  add({.names = "--no-telemetry", .key = "telemetry", .help = "GPU telemetry (health/telemetry_options.h)",
       .shared = true, .recorded = label, .record = [](const O& o) {
         return json{{"enabled", o.telemetry.enabled}, {"interval_us", o.telemetry.interval.count()}};
       }});
  // Reliability (docs/reliability.md); --help lists the telemetry flags before these.
  add({.names = "--resume", .key = "resume",
       .help = "continue the interrupted run in FILE: measure the points it lacks, into FILE (or -o)",
       .section = Section::reliability, .parse = string_text<&O::resume>,
       .check = [](const O& o, const OptionText&) {
         if (!o.resume.empty() && o.result_to_stdout)
           throw Error("--resume with -o -: a resumed run writes into a file (--resume FILE, or -o FILE)");
       }});
  add({.names = "--force", .key = "force", .help = "replace an existing -o file (without it gpuscale refuses)",
       .section = Section::reliability, .is_switch = true, .parse = switch_text<&O::force>});
  add({.names = "--max-time", .key = "max_time",
       .help = "refuse, before measuring, a plan estimated to take longer on a typical device (s, m, h or d; "
               "default 24h, 0 = no limit); the estimate is printed at the start",
       .section = Section::reliability, .initial = "24h",
       .parse = [](O& o, const std::string& s, const std::string& what) { o.max_time_s = parse_max_time(s, what); }});
  add({.names = "--watchdog", .key = "watchdog_s",
       .help = "seconds a benchmark point may go with no rank completing a step (a repetition, an operation) "
               "before the run ends with exit 5; a slow but progressing point is not limited (default: scaled to "
               "the point, at least 120; 0 = off)",
       .section = Section::reliability,
       .parse = [](O& o, const std::string& s, const std::string& what) { o.watchdog_s = seconds_text(s, what); },
       .recorded = label, .record = record_value<&O::watchdog_s>});
  return t;
}

}  // namespace

std::string empty_value_problem(std::string_view value) {
  return value.empty() ? "an empty value: give one, or leave the option out for its default" : "";
}

std::span<const RunOption> run_option_table() {
  static const std::vector<RunOption> table = make_table();
  return table;
}

void apply_run_options(Section section, RunOptions& o, const OptionText& text) {
  for (const auto& e : run_option_table()) {
    if (e.section != section || e.shared) continue;
    const std::string& given = text(e.key);
    if (!given.empty() || *e.initial) e.parse(o, given, e.what());
    if (e.check) e.check(o, text);
  }
}

}  // namespace gpuscale
