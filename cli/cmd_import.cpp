// gpuscale import FILE... -o OUT: peers' output (nccl-tests, nvbandwidth, BabelStream) as one gpuscale result file
// (import/). Every input is read and checked before anything is written; the file is written atomically,
// so a refused input leaves no output behind (exit 2, one line naming the file, the line and the problem).
#include <chrono>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "core/error.h"
#include "core/term_text.h"
#include "core/utc_time.h"
#include "gpuscale_version.h"
#include "import/import_document.h"
#include "import/import_formats.h"
#include "results/result_io.h"

namespace gpuscale {
namespace {

int run_import(const std::vector<std::string>& files, const std::string& output, bool force, const ImportOptions& opts,
               const std::string& cluster, const std::vector<std::string>& argv) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& f : files)
    if (fs::equivalent(f, output, ec)) throw Error(fmt::format("-o {} is also an input: the import would overwrite it", terminal_safe(output)));
  check_output_path(output);
  if (!force && fs::exists(output, ec)) throw Error(fmt::format("{} already exists (use --force to replace it)", terminal_safe(output)));
  std::vector<ImportedInput> inputs;
  for (const auto& f : files) inputs.push_back(read_import_file(f, opts));
  ImportContext ctx{GPUSCALE_VERSION, GPUSCALE_GIT_COMMIT, {}, utc_timestamp(std::chrono::system_clock::now()), cluster};
  for (const auto& a : argv) ctx.command_line.push_back(utf8_escaped(a));
  const std::string text = imported_result_text(inputs, ctx);
  write_file_atomic(output, text, force);
  std::size_t rows = 0;
  for (const auto& in : inputs) {
    fmt::print("{}: {} {} rows ({})\n", terminal_safe(in.file), in.rows.size(), in.tool, in.format);
    rows += in.rows.size();
  }
  fmt::print("wrote {}: {} rows from {} file{}\n", terminal_safe(output), rows, files.size(), files.size() == 1 ? "" : "s");
  return kExitOk;
}

}  // namespace

void add_import_command(CLI::App& app, Action& action, int argc, char** argv) {
  auto* cmd = app.add_subcommand("import", "read peers' output (nccl-tests text and -J JSON, nvbandwidth text and -j JSON, BabelStream CSV and text) into a gpuscale result file");
  auto files = std::make_shared<std::vector<std::string>>();
  auto output = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  auto opts = std::make_shared<ImportOptions>();
  auto cluster = std::make_shared<std::string>();
  auto args = std::make_shared<std::vector<std::string>>(argv, argv + argc);
  std::vector<std::string> formats = {"auto"};
  for (const auto& f : import_format_names()) formats.push_back(f);
  cmd->add_option("files", *files, "the tools' output files")->required();
  cmd->add_option("-o,--output", *output, "the result file to write")->required();
  cmd->add_option("--format", opts->format, fmt::format("the inputs' format: {} (auto: told by each file's first lines)", fmt::join(formats, ", ")))
      ->check(CLI::IsMember(formats));
  cmd->add_option("--collective", opts->collective,
                  "nccl-tests before 2.18 does not print its binary: the one that made the log (all_reduce_perf, ...)");
  cmd->add_option("--backend", opts->backend, "what BabelStream ran on when its output does not say (its CSV never does): cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--cluster", *cluster, "the cluster's name (default: the first input's first host)");
  cmd->add_flag("--force", *force, "replace an existing -o file");
  cmd->callback([&action, files, output, force, opts, cluster, args] {
    action = [files, output, force, opts, cluster, args]() -> int { return run_import(*files, *output, *force, *opts, *cluster, *args); };
  });
}

}  // namespace gpuscale
