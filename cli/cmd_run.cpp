// gpuscale run: parse the options, start MPI, run the plan.
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/fault.h"
#include "world/agree.h"
#include "world/test_hosts.h"
#include "cli/commands.h"
#include "harness/registry.h"
#include "harness/resume.h"
#include "harness/run_option_table.h"
#include "harness/runner.h"
#include "harness/guard/stop_signal.h"
#include "peaks/gpu_peaks.h"

namespace gpuscale {
namespace {

// The command line's texts, one per entry of the run option table (harness/run_option_table.h).
struct RunFlags {
  struct Value {
    std::string text;
    bool on = false;  // a switch
  };
  std::vector<Value> values = std::vector<Value>(run_option_table().size());
  health::TelemetryFlags telemetry;
  std::vector<std::string> command_line;
  std::set<std::string> given;  // plan.options keys (and backend, seed) given on the command line
};

// Turns the flags into RunOptions; every problem is one gpuscale::Error naming the flag and value.
RunOptions resolve(const RunFlags& f) {
  const auto table = run_option_table();
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < table.size(); ++i)
    texts.push_back(table[i].is_switch ? (f.values[i].on ? "true" : "false") : f.values[i].text);
  const OptionText text = [&](std::string_view key) -> const std::string& {
    for (std::size_t i = 0; i < table.size(); ++i)
      if (table[i].key == key) return texts[i];
    throw Error(fmt::format("internal: no run option '{}'", key));
  };
  RunOptions o;
  o.command_line = f.command_line;
  o.given = f.given;
  apply_run_options(Section::measure, o, text);
  registry().check_names(o.benchmarks);
  if (!o.backend_options.peaks_file.empty()) load_gpu_peaks_file(o.backend_options.peaks_file);
  o.telemetry = health::resolve_telemetry_flags(f.telemetry);
  apply_run_options(Section::reliability, o, text);
  return o;
}

// Binds the table's options of one section to the subcommand.
void add_options(CLI::App* cmd, RunFlags& flags, Section section) {
  const auto table = run_option_table();
  for (std::size_t i = 0; i < table.size(); ++i) {
    const RunOption& e = table[i];
    if (e.section != section || e.shared) continue;  // shared: health::add_telemetry_flags adds it
    auto& v = flags.values[i];
    v.text = e.initial;
    if (e.is_switch)
      cmd->add_flag(e.names, v.on, e.help);
    else
      cmd->add_option(e.names, v.text, e.help);
  }
}

}  // namespace

void add_run_command(CLI::App& app, Action& action, int argc, char** argv) {
  auto flags = std::make_shared<RunFlags>();
  for (int i = 0; i < argc; ++i) flags->command_line.emplace_back(argv[i]);
  auto* cmd = app.add_subcommand("run", "measure every benchmark at every GPU count 1, 2, 4, ..., N of this launch");
  add_options(cmd, *flags, Section::measure);
  health::add_telemetry_flags(cmd, flags->telemetry, true);
  add_options(cmd, *flags, Section::reliability);
  cmd->callback([&action, flags, cmd] {
    // The recorded options given on the command line: --resume takes the others from the file.
    for (const auto& [key, flag] : recorded_option_flags())
      if (cmd->count(flag) > 0) flags->given.insert(key);
    action = [flags]() -> int {
      install_stop_handlers();  // before MPI starts: an early signal is not fatal
      World world(nullptr, nullptr);
      install_stop_handlers();  // again, in case the MPI library replaced them
      try {
        RunOptions opts;
        try {
          if (auto hosts = test_hosts_from_env(world.size())) world.act_as_hosts(std::move(*hosts));
          plant_slowdown(slow_host_factor(world.host()));  // GPUSCALE_TEST_FAULT slow-host, for the host it acts as
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
