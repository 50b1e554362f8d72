// gpuscale health: the node preflight for Slurm (HealthCheckProgram, prolog, slurm/health.sbatch) and
// operators. One line per GPU on stdout, the JSON with -o, the drain command with --drain-command
// (printed, never run). Under srun or mpirun, one task per node checks it and rank 0 reports the job.
#include <cstdio>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include <unistd.h>

#include "backends/local_gpus.h"
#include "core/error.h"
#include "core/term_text.h"
#include "core/launcher.h"
#include "core/units.h"
#include "cli/commands.h"
#include "world/world.h"
#include "health/health_check.h"
#include "health/health_job.h"
#include "results/result_io.h"

namespace gpuscale {
namespace {

struct HealthFlags {
  health::TelemetryFlags telemetry;
  bool no_perf = false, drain = false;
  std::string output, peaks, node_name, array_size, gemm_shape, dcgm, dcgm_timeout;
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
  if (!f.dcgm.empty()) {
    o.dcgm.level = health::parse_dcgm_level(f.dcgm);
    o.dcgm.timeout_s = f.dcgm_timeout.empty() ? health::default_dcgm_timeout_s(o.dcgm.level)
                                              : parse_time_span(f.dcgm_timeout, "--dcgm-timeout");
  } else if (!f.dcgm_timeout.empty()) {
    throw Error("--dcgm-timeout goes with --dcgm only");
  }
  return o;
}

std::string host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string("unknown-host");
}

// This node's report (the check never throws past here: a failure is a report saying so).
nlohmann::json check_node(const HealthFlags& f) {
  try {
    const auto opts = resolve(f);
    std::string why_no_gpus;
    auto gpus = open_local_gpus(opts.peaks_file, &why_no_gpus);
    return health::report_json(health::run_health_check(opts, gpus.get(), why_no_gpus));
  } catch (const std::exception& e) {
    return health::failed_node_report(host_name(), e.what());
  }
}

// Alone: this node. Under srun or mpirun: the first task of each node checks it, rank 0 reports.
int run_health(const HealthFlags& f) {
  std::unique_ptr<World> world;
  try {
    if (launcher_rank() >= 0) world = std::make_unique<World>(nullptr, nullptr);
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpuscale: health: cannot start MPI under the launcher: {}\n", message_line(e.what()));
    return health::kHealthCannotCheck;
  }
  const bool root = !world || world->rank() == 0;
  // Bad flags or output path: rank 0 decides for everyone, says it once, and nothing is checked.
  std::string problem;
  if (root) {
    try {
      resolve(f);
      if (!f.output.empty()) check_output_path(f.output);
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  if (world) problem = world->broadcast_from_root(problem);
  if (!problem.empty()) {
    if (root) fmt::print(stderr, "gpuscale: health: {}\n", message_line(problem));
    return health::kHealthCannotCheck;
  }

  const nlohmann::json mine = (!world || world->local_rank() == 0) ? check_node(f) : nlohmann::json(nullptr);
  std::vector<nlohmann::json> nodes;
  if (world) {
    for (const auto& s : world->gather_to_root(mine.dump()))
      if (auto j = nlohmann::json::parse(s); !j.is_null()) nodes.push_back(std::move(j));
  } else {
    nodes.push_back(mine);
  }
  int code = health::kHealthCannotCheck;
  if (root) {
    try {
      const auto job = health::combine_node_reports(nodes, health::load_thresholds(f.telemetry.thresholds));
      for (const auto& line : job.lines) fmt::print("{}\n", line);
      if (f.drain)
        for (const auto& cmd : job.drain) fmt::print("{}\n", cmd);
      std::fflush(stdout);
      if (!f.output.empty()) write_file_atomic(f.output, job.doc.dump(1) + "\n");
      code = job.exit_code;
    } catch (const std::exception& e) {
      fmt::print(stderr, "gpuscale: health: {}\n", message_line(e.what()));
    }
  }
  if (world) code = std::stoi(world->broadcast_from_root(std::to_string(code)));  // every task exits alike
  return code;
}

}  // namespace

void add_health_command(CLI::App& app, Action& action) {
  auto flags = std::make_shared<HealthFlags>();
  auto* cmd = app.add_subcommand(
      "health",
      "check this node's GPUs (NVML, short bandwidth and GEMM runs): exit 0 healthy, 1 warnings, 2 failures, "
      "3 no GPU, 5 could not check");
  cmd->add_option("-o,--output", flags->output, "write the report as JSON to this file");
  cmd->add_flag("--drain-command", flags->drain,
                "for a failing node, also print the scontrol line that drains it (never run by gpuscale)");
  cmd->add_option("--node-name", flags->node_name,
                  "Slurm node name for --drain-command (default $SLURMD_NODENAME, else the short hostname)");
  cmd->add_flag("--no-perf", flags->no_perf, "NVML checks only: no bandwidth or GEMM run");
  cmd->add_option("--peaks", flags->peaks, "JSON file of GPU models adding to / replacing the built-in peaks");
  cmd->add_option("--array-size", flags->array_size, "bandwidth check: bytes per array (default the device's, at most 1G)");
  cmd->add_option("--gemm-shape", flags->gemm_shape, "GEMM check: N or MxNxK (default 8192)");
  cmd->add_option("--dcgm", flags->dcgm,
                  "r1|r2|r3|r4: after the checks, run DCGM's diagnostic (dcgmi diag -r N -j); each test's result "
                  "per GPU joins its verdict (exit 5 when dcgmi is missing or its output cannot be read)");
  cmd->add_option("--dcgm-timeout", flags->dcgm_timeout,
                  "deadline for dcgmi diag, e.g. 20m (default r1 5m, r2 15m, r3 1h, r4 4h); past it dcgmi is killed");
  health::add_telemetry_flags(cmd, flags->telemetry, false);
  cmd->callback([&action, flags] { action = [flags] { return run_health(*flags); }; });
}

}  // namespace gpuscale
