// gpuscale health: the node preflight for Slurm (HealthCheckProgram, prolog) and operators. One line
// per GPU on stdout, the JSON with -o, the drain command with --drain-command (printed, never run).
#include <cstdio>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "core/error.h"
#include "core/units.h"
#include "harness/commands.h"
#include "health/health_check.h"
#include "results/result_io.h"

namespace gpuscale {
namespace {

struct HealthFlags {
  health::TelemetryFlags telemetry;
  bool no_perf = false, drain = false;
  std::string output, peaks, node_name, array_size, gemm_shape;
};

health::HealthOptions resolve(const HealthFlags& f) {
  health::HealthOptions o;
  o.telemetry = health::resolve_telemetry_flags(f.telemetry);
  if (f.telemetry.interval.empty()) o.telemetry.interval = std::chrono::milliseconds(20);  // a short check: finer samples
  o.perf = !f.no_perf;
  o.peaks_file = f.peaks;
  o.node_name = f.node_name;
  if (!f.array_size.empty()) o.perf_options.array_bytes = parse_size(f.array_size, "--array-size");
  if (!f.gemm_shape.empty()) o.perf_options.gemm_shape = parse_gemm_shape(f.gemm_shape);
  return o;
}

int run_health(const HealthFlags& f) {
  try {
    const auto opts = resolve(f);
    if (!f.output.empty()) check_output_path(f.output);
    std::string why_no_gpus;
    auto gpus = health::open_local_gpus(opts.peaks_file, &why_no_gpus);
    const auto report = health::run_health_check(opts, gpus.get(), why_no_gpus);
    for (const auto& line : health::report_lines(report)) fmt::print("{}\n", line);
    if (f.drain)
      if (const auto cmd = health::drain_command(report); !cmd.empty()) fmt::print("{}\n", cmd);
    std::fflush(stdout);
    if (!f.output.empty()) write_file_atomic(f.output, health::report_json(report).dump(1) + "\n");
    return report.exit_code;
  } catch (const Error& e) {
    fmt::print(stderr, "gpuscale: health: {}\n", e.what());
    return health::kHealthCannotCheck;
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpuscale: health: internal error: {}\n", e.what());
    return health::kHealthCannotCheck;
  }
}

}  // namespace

void add_health_command(CLI::App& app, Action& action) {
  auto flags = std::make_shared<HealthFlags>();
  auto* cmd = app.add_subcommand(
      "health",
      "check this node's GPUs (NVML, short bandwidth and GEMM runs): exit 0 healthy, 1 warnings, 2 failures, "
      "3 no GPU, 4 could not check");
  cmd->add_option("-o,--output", flags->output, "write the report as JSON to this file");
  cmd->add_flag("--drain-command", flags->drain,
                "for a failing node, also print the scontrol line that drains it (never run by gpuscale)");
  cmd->add_option("--node-name", flags->node_name,
                  "Slurm node name for --drain-command (default $SLURMD_NODENAME, else the short hostname)");
  cmd->add_flag("--no-perf", flags->no_perf, "NVML checks only: no bandwidth or GEMM run");
  cmd->add_option("--peaks", flags->peaks, "JSON file of GPU models adding to / replacing the built-in peaks");
  cmd->add_option("--array-size", flags->array_size, "bandwidth check: bytes per array (default the device's, at most 1G)");
  cmd->add_option("--gemm-shape", flags->gemm_shape, "GEMM check: N or MxNxK (default 8192)");
  health::add_telemetry_flags(cmd, flags->telemetry, false);
  cmd->callback([&action, flags] { action = [flags] { return run_health(*flags); }; });
}

int usage_exit_code(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return std::strcmp(argv[i], "health") == 0 ? int{health::kHealthCannotCheck} : int{kExitUsage};
  return kExitUsage;
}

}  // namespace gpuscale
