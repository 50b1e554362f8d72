// gpuscale run: parse the options, start MPI, run the plan.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/error.h"
#include "core/fault.h"
#include "core/term_text.h"
#include "harness/guard/stop_signal.h"
#include "harness/options/run_option_table.h"
#include "harness/registry.h"
#include "harness/run/resume.h"
#include "harness/run/runner.h"
#include "history/store_url.h"
#include "kernels/sysfs_root.h"
#include "peaks/gpu_peaks.h"
#include "world/agree.h"
#include "world/test_hosts.h"

namespace gpuscale {
namespace {

// The command line's texts, one per entry of the run option table (harness/options/run_option_table.h).
struct RunFlags {
  struct Value {
    std::string text;
    bool on = false;  // a switch
  };
  std::vector<Value> values = std::vector<Value>(run_option_table().size());
  health::TelemetryFlags telemetry;
  std::vector<std::string> command_line;
  std::set<std::string> given;  // plan.options keys (and backend, seed) given on the command line
  std::string store;            // --store URL (cli/cmd_history.cpp)
  std::vector<std::string> foreign;  // nccl-tests' flags without a counterpart (refused)
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

// -o -: rank 0 writes the result file in a temporary folder ($TMPDIR) as it writes any result file (the
// result keeper rewrites it atomically, its journal beside it), and copies it to stdout at the end. A
// complete run's folder is removed; a cut-short run's stays, for --resume, and stderr says where.
class StdoutResult {
 public:
  void open(RunOptions& o, bool root) {
    if (!o.result_to_stdout || !root) return;
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/gpuscale-stdout-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw Error(fmt::format("-o -: cannot make a temporary folder {} (set TMPDIR to a writable one)", pattern));
    dir_ = pattern;
    o.output = dir_ + "/result.json";
  }

  // The run returned `code`; `copy` false: it ended on an error, and stdout gets nothing.
  void finish(int code, bool copy = true) {
    if (dir_.empty()) return;
    const std::string path = dir_ + "/result.json";
    std::ifstream in(path, std::ios::binary);
    if (!copy) {
      std::error_code ec;
      if (in) fmt::print(stderr, "gpuscale: {}\n", message_line("-o -: the partial result file stays in " + path));
      else std::filesystem::remove_all(dir_, ec);
      dir_.clear();
      return;
    }
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    std::error_code ec;
    if (in && (code == kExitOk || code == kExitInvalidResult)) std::filesystem::remove_all(dir_, ec);
    else if (in)
      fmt::print(stderr, "gpuscale: {}\n",
                 message_line(fmt::format("-o -: the result file stays in {} (--resume {} continues it)", path, path)));
    else std::filesystem::remove_all(dir_, ec);
  }

 private:
  std::string dir_;
};

// nccl-tests' flags gpuscale has no counterpart for: one line each says so (exit 2), instead of
// CLI11's "not expected". Hidden from --help.
struct ForeignFlag {
  const char* name;
  const char* why;
};
constexpr ForeignFlag kForeignFlags[] = {
    {"-z", "nccl-tests' blocking-collectives switch: gpuscale has no such mode"},
    {"-G", "nccl-tests' CUDA-graph launches: gpuscale does not capture collectives in graphs"},
    {"-r", "nccl-tests' root rank: gpuscale's rooted collectives (broadcast, reduce) use root 0"},
    {"-g", "nccl-tests' GPUs per process: gpuscale runs one GPU per rank (launch one rank per GPU)"},
    {"-t", "nccl-tests' threads per process: gpuscale runs one GPU per rank (launch one rank per GPU)"},
};

void add_foreign_flags(CLI::App* cmd, std::vector<std::string>& texts) {
  texts.resize(std::size(kForeignFlags));
  for (std::size_t i = 0; i < std::size(kForeignFlags); ++i) cmd->add_option(kForeignFlags[i].name, texts[i])->group("");
}

void refuse_foreign_flags(CLI::App* cmd) {
  for (const auto& f : kForeignFlags)
    if (cmd->count(f.name) > 0) throw Error(fmt::format("{} is {}; gpuscale run --help lists its options", f.name, f.why));
}

// The table's rule for an empty value (harness/options/run_option_table.h), as CLI11 runs it on each value.
const CLI::Validator& not_empty() {
  static const CLI::Validator v([](std::string& s) { return empty_value_problem(s); }, "");
  return v;
}

// Binds the table's options of one section to the subcommand.
void add_options(CLI::App* cmd, RunFlags& flags, Section section) {
  const auto table = run_option_table();
  for (std::size_t i = 0; i < table.size(); ++i) {
    const RunOption& e = table[i];
    if (e.section != section || e.shared) continue;  // shared: health::add_telemetry_flags adds it
    auto& v = flags.values[i];
    v.text = e.initial;
    // The groups come from the registry, which the table does not link (harness/options/run_option_table.cpp).
    const auto help = e.key == "benchmarks" ? fmt::format("{} ({})", e.help, registry().groups_text()) : e.help;
    if (e.is_switch)
      cmd->add_flag(e.names, v.on, help);
    else
      cmd->add_option(e.names, v.text, help)->check(not_empty());
  }
}

}  // namespace

void add_run_command(CLI::App& app, Action& action, int argc, char** argv) {
  auto flags = std::make_shared<RunFlags>();
  // Recorded in the result file: a --store URL's password is masked there (docs/history.md).
  for (int i = 0; i < argc; ++i) flags->command_line.emplace_back(history::mask_password(argv[i]));
  auto* cmd = app.add_subcommand("run", "measure every benchmark at every GPU count 1, 2, 4, ..., N of this launch");
  add_options(cmd, *flags, Section::measure);
  health::add_telemetry_flags(cmd, flags->telemetry, true);
  add_options(cmd, *flags, Section::reliability);
  add_foreign_flags(cmd, flags->foreign);
  cmd->add_option("--store", flags->store, "add the result file to this results history at the end (docs/history.md; default $GPUSCALE_STORE)")
      ->check(not_empty());
  cmd->callback([&action, flags, cmd] {
    refuse_foreign_flags(cmd);
    // The recorded options given on the command line: --resume takes the others from the file.
    for (const auto& [key, flag] : recorded_option_flags())
      if (cmd->count(flag) > 0) flags->given.insert(key);
    action = [flags]() -> int {
      install_stop_handlers();  // before MPI starts: an early signal is not fatal
      World world(nullptr, nullptr);
      install_stop_handlers();  // again, in case the MPI library replaced them
      StdoutResult to_stdout;
      try {
        RunOptions opts;
        std::string store;
        try {
          if (auto hosts = test_hosts_from_env(world.size())) world.act_as_hosts(std::move(*hosts));
          sysfs_root();  // GPUSCALE_TEST_SYSFS_ROOT checked here, where a bad one fails every rank alike
          // GPUSCALE_TEST_FAULT's timing faults (core/fault_plan.h), for the host and local index the rank acts as.
          plant_faults(timing_faults_from_env(world.hosts()), world.host(),
                       world.local_ranks()[static_cast<std::size_t>(world.rank())]);
          opts = resolve(*flags);  // deterministic: every rank fails alike, rank 0 says so
          store = run_store_url(flags->store);  // --store / GPUSCALE_STORE, checked before the run
        } catch (const Error& e) {
          throw AgreedError(e.what(), e.exit_code());
        }
        if (world.rank() == 0)
          for (const auto& note : opts.notes) fmt::print(stderr, "gpuscale: note: {}\n", message_line(note));
        to_stdout.open(opts, world.rank() == 0);
        const int code = run_plan(opts, world);
        // The finished file goes to the history; a store that fails keeps the file and says so (exit 7).
        const int stored = world.rank() == 0 && !store.empty() ? store_finished_run(store, opts.output, code) : code;
        to_stdout.finish(code);
        return stored;
      } catch (const AgreedError& e) {
        if (world.rank() == 0) fmt::print(stderr, "gpuscale: {}\n", message_line(e.what()));
        to_stdout.finish(e.exit_code(), false);
        return e.exit_code();
      } catch (const Error& e) {
        fmt::print(stderr, "gpuscale: {}\n", message_line(fmt::format("rank {} ({}): {}", world.rank(), world.host(), e.what())));
        to_stdout.finish(e.exit_code(), false);
        return e.exit_code();
      }
    };
  });
}

}  // namespace gpuscale
