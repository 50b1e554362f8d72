// gpuscale merge -o OUT FILE...: combine result files into one result set (analysis/merge.h). Inputs
// that cannot be read are named, one line each, and the rest are still merged; the exit code is then
// kExitUsage, so a campaign's merge job shows that something was missing.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "analysis/merge.h"
#include "analysis/result_set.h"
#include "core/error.h"
#include "results/result_document.h"
#include "core/term_text.h"
#include "gpuscale_version.h"
#include "cli/commands.h"
#include "results/result_io.h"

namespace gpuscale {
namespace {

// What merge says about one input; everything taken from a file is made safe for the terminal.
std::string describe_input(const nlohmann::json& e) {
  if (e["status"] != "merged")
    return fmt::format("{} ({})", e["status"].get<std::string>(), terminal_safe(e["error"].get<std::string>()));
  const auto& s = e["slurm"];
  const std::string job = s.is_object() ? fmt::format("job {}, ", terminal_safe(s["job_id"].get<std::string>())) : "";
  const std::string state = e["interrupted"].is_string() ? terminal_safe(e["interrupted"].get<std::string>())
                            : e["complete"].get<bool>()  ? (e["valid"].get<bool>() ? "complete" : "complete, NOT valid")
                                                         : "incomplete (the run did not finish)";
  return fmt::format("{}{} ranks on {} node(s), {}; {} rows: {} kept, {} superseded", job, e["world_size"].get<int>(),
                     e["hosts"].size(), state, e["rows"].get<int>(), e["rows_kept"].get<int>(),
                     e["rows_superseded"].get<int>());
}

int run_merge(const std::vector<std::string>& files, const std::string& output, bool force,
              const std::vector<std::string>& argv) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& f : files)
    if (fs::equivalent(f, output, ec)) throw Error(fmt::format("-o {} is also an input: the merge would overwrite it", output));
  check_output_path(output);
  if (!force && fs::exists(output, ec))
    throw Error(fmt::format("{} already exists (use --force to replace it)", output));
  // Each input's rows as written (their input index set), and the rows without their ranks for the
  // choice: memory holds the inputs' text once, not their rank entries. Inputs are read side by side,
  // one thread per core.
  std::vector<MergeInput> inputs(files.size());
  std::vector<std::vector<std::string>> lines(files.size());
  std::atomic<std::size_t> next{0};
  std::mutex failed_mutex;
  std::exception_ptr failed;
  auto read_inputs = [&] {
    for (std::size_t i; (i = next++) < files.size();) {
      const auto& f = files[i];
      MergeInput in{f, std::nullopt, ""};
      try {
        in.run = load_result(f, RowDetail::rows_only, [&](ResultRow& row) {
          row.input = static_cast<int>(i);
          lines[i].push_back(result_row_line(row));
        });
      } catch (const Error& e) {
        in.error = e.what();
        // load_result names the file first; keep only the reason.
        if (in.error.rfind(f + ": ", 0) == 0) in.error.erase(0, f.size() + 2);
        lines[i].clear();
      } catch (...) {  // anything else (out of memory) ends the merge as it would without threads
        std::lock_guard lock(failed_mutex);
        if (!failed) failed = std::current_exception();
        return;
      }
      inputs[i] = std::move(in);
    }
  };
  const auto threads = std::min<std::size_t>(files.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(read_inputs);
  read_inputs();
  for (auto& t : pool) t.join();
  if (failed) std::rethrow_exception(failed);
  const auto outcome = merge_results(inputs, {argv, GPUSCALE_VERSION, GPUSCALE_GIT_COMMIT});
  // The text is checked against the schema as it is made (merged_result_text).
  write_file_atomic(output, merged_result_text(outcome, inputs, lines), force);  // never over a file that appeared meanwhile
  for (const auto& e : outcome.header["merged_from"])
    fmt::print(e["status"] == "merged" ? stdout : stderr, "{}{}: {}\n", e["status"] == "merged" ? "" : "gpuscale: ",
               terminal_safe(e["file"].get<std::string>()), describe_input(e));
  const auto& s = outcome.header["summary"];
  fmt::print("merged {} of {} file(s): {} rows ({} ok, {} invalid, {} failed, {} skipped) at GPU counts {}\n",
             files.size() - outcome.problems.size(), files.size(), s["rows"].get<int>(), s["ok"].get<int>(),
             s["invalid"].get<int>(), s["failed"].get<int>(), s["skipped"].get<int>(),
             outcome.header["plan"]["gpu_counts"].dump());
  fmt::print("results: {}\n", output);
  return outcome.problems.empty() ? kExitOk : kExitUsage;
}

}  // namespace

void add_merge_command(CLI::App& app, Action& action, int argc, char** argv) {
  auto* cmd = app.add_subcommand("merge", "combine result files (e.g. a scaling campaign's jobs) into one result set");
  auto files = std::make_shared<std::vector<std::string>>();
  auto output = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  auto args = std::make_shared<std::vector<std::string>>(argv, argv + argc);
  cmd->add_option("files", *files, "result JSON files")->required();
  cmd->add_option("-o,--output", *output, "the merged result file")->required();
  cmd->add_flag("--force", *force, "replace an existing -o file (without it merge refuses)");
  cmd->callback([&action, files, output, force, args] {
    action = [files, output, force, args]() -> int { return run_merge(*files, *output, *force, *args); };
  });
}

}  // namespace gpuscale
