// gpuscale run: parse the options, start MPI, run the plan.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "core/error.h"
#include "core/units.h"
#include "world/agree.h"
#include "cli/commands.h"
#include "peaks/gpu_peaks.h"
#include "harness/registry.h"
#include "harness/resume.h"
#include "harness/runner.h"
#include "harness/guard/stop_signal.h"

namespace gpuscale {
namespace {

struct RunFlags {
  std::string backend = "auto", benchmarks, dtypes, minbytes, maxbytes, stepfactor, stepbytes, iters, warmup, reps,
              ops, placement, array_size, gemm_shapes, copy_size, threads, seed, time_reduce = "avg", link_peak, net_peak,
              timeout, transports, dp_width, dp_depth, dp_batch, dp_bucket, watchdog;
  health::TelemetryFlags telemetry;
  RunOptions opts;
};

double parse_rate(const std::string& text, const char* what) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v > 0 && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  throw Error(fmt::format("invalid {} '{}': expected a positive number of GB/s", what, text));
}

// Turns the flags into RunOptions; every problem is one gpuscale::Error naming the flag and value.
RunOptions resolve(RunFlags& f) {
  RunOptions& o = f.opts;
  if (f.backend != "cpu" && f.backend != "cuda" && f.backend != "auto")
    throw Error(fmt::format("invalid --backend '{}': use cpu, cuda or auto", f.backend));
  o.backend = f.backend;
  if (!f.benchmarks.empty()) {
    o.benchmarks = split_list(f.benchmarks, "--benchmarks");
    registry().check_names(o.benchmarks);
  }
  if (!f.dtypes.empty()) o.dtypes = parse_dtype_list(f.dtypes);
  if (!f.minbytes.empty()) o.min_bytes = parse_size(f.minbytes, "-b/--minbytes");
  if (!f.maxbytes.empty()) o.max_bytes = parse_size(f.maxbytes, "-e/--maxbytes");
  if (!f.stepfactor.empty()) {
    o.step_factor = static_cast<std::uint64_t>(parse_positive(f.stepfactor, "-f/--stepfactor"));
    if (*o.step_factor < 2) throw Error(fmt::format("invalid -f/--stepfactor '{}': must be at least 2", f.stepfactor));
  }
  if (!f.stepbytes.empty()) o.step_bytes = parse_size(f.stepbytes, "-i/--stepbytes");
  if (o.min_bytes && o.max_bytes && *o.min_bytes > *o.max_bytes)
    throw Error(fmt::format("invalid sizes: -b {} is larger than -e {}", f.minbytes, f.maxbytes));
  if (!f.iters.empty()) o.iters = parse_positive_int(f.iters, "-n/--iters");
  if (!f.warmup.empty()) o.warmup = f.warmup == "0" ? 0 : parse_positive_int(f.warmup, "-w/--warmup");
  if (!f.reps.empty()) o.reps = parse_positive_int(f.reps, "--reps");
  if (!f.ops.empty())
    for (const auto& name : split_list(f.ops, "--ops")) {
      auto op = parse_redop(name);
      if (!op) throw Error(fmt::format("invalid --ops '{}': use sum, prod, min, max or avg", name));
      o.ops.push_back(*op);
    }
  if (!f.placement.empty())
    for (const auto& p : split_list(f.placement, "--placement")) {
      if (p == "out-of-place" || p == "out") o.in_place.push_back(false);
      else if (p == "in-place" || p == "in") o.in_place.push_back(true);
      else throw Error(fmt::format("invalid --placement '{}': use out-of-place and/or in-place", p));
    }
  if (!f.array_size.empty()) o.array_bytes = parse_size(f.array_size, "--array-size");
  if (!f.gemm_shapes.empty())
    for (const auto& s : split_list(f.gemm_shapes, "--gemm-shapes")) o.gemm_shapes.push_back(parse_gemm_shape(s));
  if (!f.copy_size.empty()) o.copy_bytes = parse_size(f.copy_size, "--copy-size");
  if (!o.backend_options.peaks_file.empty()) load_gpu_peaks_file(o.backend_options.peaks_file);  // a malformed file stops the run here
  if (!f.threads.empty()) o.backend_options.threads = parse_positive_int(f.threads, "--threads");
  if (!f.seed.empty()) {
    o.seed = static_cast<std::uint64_t>(parse_positive(f.seed, "--seed"));
    if (*o.seed >= (1ULL << 53)) throw Error(fmt::format("invalid --seed '{}': must be below 2^53", f.seed));
  }
  static const char* kReduce[] = {"rank0", "avg", "min", "max"};  // nccl-tests -a 0..3
  if (f.time_reduce.size() == 1 && f.time_reduce[0] >= '0' && f.time_reduce[0] <= '3')
    o.time_reduce = kReduce[f.time_reduce[0] - '0'];
  else if (f.time_reduce == "avg" || f.time_reduce == "min" || f.time_reduce == "max" || f.time_reduce == "rank0")
    o.time_reduce = f.time_reduce;
  else
    throw Error(fmt::format("invalid -a/--time-reduce '{}': use avg, min, max, rank0 (or 0-3 as nccl-tests)",
                            f.time_reduce));
  if (!f.link_peak.empty()) o.backend_options.link_peak = parse_rate(f.link_peak, "--link-peak");
  if (!f.net_peak.empty()) o.backend_options.net_peak = parse_rate(f.net_peak, "--net-peak");
  if (!f.timeout.empty()) o.backend_options.timeout_s = f.timeout == "0" ? 0.0 : static_cast<double>(parse_positive(f.timeout, "-T/--timeout"));
  if (!f.transports.empty())
    for (const auto& t : split_list(f.transports, "--transports")) {
      if (t != "nccl" && t != "mpi") throw Error(fmt::format("invalid --transports '{}': use nccl and/or mpi", t));
      o.transports.push_back(t);
    }
  if (!f.dp_width.empty()) o.dp_width = static_cast<std::uint64_t>(parse_positive_int(f.dp_width, "--dp-width"));
  if (!f.dp_depth.empty()) o.dp_depth = parse_positive_int(f.dp_depth, "--dp-depth");
  if (!f.dp_batch.empty()) o.dp_batch = static_cast<std::uint64_t>(parse_positive_int(f.dp_batch, "--dp-batch"));
  if (!f.dp_bucket.empty()) o.dp_bucket = parse_size(f.dp_bucket, "--dp-bucket");
  o.telemetry = health::resolve_telemetry_flags(f.telemetry);
  if (!f.watchdog.empty())
    o.watchdog_s = f.watchdog == "0" ? 0.0 : static_cast<double>(parse_positive(f.watchdog, "--watchdog"));
  return o;
}

}  // namespace

void add_run_command(CLI::App& app, Action& action, int argc, char** argv) {
  auto flags = std::make_shared<RunFlags>();
  for (int i = 0; i < argc; ++i) flags->opts.command_line.emplace_back(argv[i]);
  auto* cmd = app.add_subcommand("run", "measure every benchmark at every GPU count 1, 2, 4, ..., N of this launch");
  cmd->add_option("--backend", flags->backend, "cpu, cuda or auto (CUDA when a GPU is visible)");
  cmd->add_flag("--quick", flags->opts.quick, "a small plan: seconds, for smoke tests and CI");
  cmd->add_option("--benchmarks", flags->benchmarks, "comma list of benchmark keys or groups (stream, gemm, collective)");
  cmd->add_option("--dtypes", flags->dtypes, "comma list of element types (fp64, fp32, tf32, bf16, fp16, fp8_e4m3, int8, int32)");
  cmd->add_option("-b,--minbytes", flags->minbytes, "collectives: smallest message size (K/M/G suffixes)");
  cmd->add_option("-e,--maxbytes", flags->maxbytes, "collectives: largest message size");
  cmd->add_option("-f,--stepfactor", flags->stepfactor, "collectives: multiply the size by this factor");
  cmd->add_option("-i,--stepbytes", flags->stepbytes, "collectives: add this many bytes instead");
  cmd->add_option("-n,--iters", flags->iters, "collectives: operations per timed repetition");
  cmd->add_option("-w,--warmup", flags->warmup, "warm-up passes (collectives: operations) before timing");
  cmd->add_option("--reps", flags->reps, "timed repetitions; statistics are over these");
  cmd->add_option("--ops", flags->ops, "collectives: reduction ops (sum, prod, min, max, avg)");
  cmd->add_option("--placement", flags->placement, "collectives: out-of-place, in-place (default both)");
  cmd->add_option("--array-size", flags->array_size, "STREAM: bytes per array (default 4x LLC / 8x L2)");
  cmd->add_option("--gemm-shapes", flags->gemm_shapes, "GEMM: comma list of N or MxNxK[:TN]");
  cmd->add_option("--copy-size", flags->copy_size, "copy benchmarks: bytes per copy (default 256M)");
  cmd->add_option("--peaks", flags->opts.backend_options.peaks_file, "JSON file of GPU models adding to / replacing the built-in peaks");
  cmd->add_option("--threads", flags->threads, "CPU backend: threads per rank (default cores / ranks on the node)");
  cmd->add_option("--cluster", flags->opts.cluster, "cluster name for the result file");
  cmd->add_option("-o,--output", flags->opts.output, "result file (default results/<cluster>-<UTC time>[-<jobid>].json)");
  cmd->add_option("--seed", flags->seed, "seed of the random inputs (default: random, recorded)");
  cmd->add_option("-a,--time-reduce", flags->time_reduce, "collectives: how ranks' times combine: avg, min, max, rank0");
  cmd->add_option("--link-peak", flags->link_peak, "GB/s: expected intra-node link peak for collectives");
  cmd->add_option("--net-peak", flags->net_peak, "GB/s: expected inter-node link peak for collectives");
  cmd->add_option("-T,--timeout", flags->timeout,
                  "NCCL: seconds a collective may wait before its communicator is aborted (default 300, 0 = never)");
  cmd->add_option("--transports", flags->transports,
                  "CUDA collectives: nccl and/or mpi (MPI on GPU buffers; default nccl, plus mpi when CUDA-aware)");
  cmd->add_option("--dp-width", flags->dp_width, "dp-step: layer width (default 8192 on CUDA, 1024 on the CPU)");
  cmd->add_option("--dp-depth", flags->dp_depth, "dp-step: layers (default 4)");
  cmd->add_option("--dp-batch", flags->dp_batch, "dp-step: samples per rank per step (default 8192 on CUDA, 256 on the CPU)");
  cmd->add_option("--dp-bucket", flags->dp_bucket, "dp-step: gradient bucket cap (default 25M, DDP's)");
  health::add_telemetry_flags(cmd, flags->telemetry, true);
  cmd->add_option("--resume", flags->opts.resume,
                  "continue the interrupted run in FILE: measure the points it lacks, into FILE (or -o)");
  cmd->add_flag("--force", flags->opts.force, "replace an existing -o file (without it gpuscale refuses)");
  cmd->add_option("--watchdog", flags->watchdog,
                  "seconds a benchmark point may take before the run ends with exit 5 (default: scaled to the point, "
                  "at least 120; 0 = off)");
  cmd->callback([&action, flags, cmd] {
    // The recorded options given on the command line: --resume takes the others from the file.
    for (const auto& [key, flag] : recorded_option_flags())
      if (cmd->count(flag) > 0) flags->opts.given.insert(key);
    action = [flags]() -> int {
      install_stop_handlers();  // before MPI starts: an early signal is not fatal
      World world(nullptr, nullptr);
      install_stop_handlers();  // again, in case the MPI library replaced them
      try {
        RunOptions opts;
        try {
          opts = resolve(*flags);  // deterministic: every rank fails alike, rank 0 says so
        } catch (const Error& e) {
          throw AgreedError(e.what(), e.exit_code());
        }
        return run_plan(opts, world);
      } catch (const AgreedError& e) {
        if (world.rank() == 0) fmt::print(stderr, "gpuscale: {}\n", e.what());
        return e.exit_code();
      } catch (const Error& e) {
        fmt::print(stderr, "gpuscale: rank {} ({}): {}\n", world.rank(), world.host(), e.what());
        return e.exit_code();
      }
    };
  });
}

}  // namespace gpuscale
