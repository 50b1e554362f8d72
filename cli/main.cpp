// gpuscale: one executable, subcommands. Errors reach the user as one line and a non-zero exit code.
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backends/backend.h"
#include "backends/cuda_module/cuda_loader.h"
#include "core/error.h"
#include "core/launcher.h"
#include "core/term_text.h"
#include "cli/commands.h"
#include "gpuscale_version.h"
#include "health/health_check.h"

namespace {

// The arguments no option took, in command-line order, in CLI11's words.
std::string extras_message(const CLI::App& app, const CLI::ExtrasError& e) {
  std::vector<std::string> extra = app.remaining(true);
  if (extra.empty()) return e.what();
  std::string out = extra.size() > 1 ? "The following arguments were not expected:" : "The following argument was not expected:";
  for (const auto& a : extra) out += " " + a;
  return out;
}

// The exit code for a command line that does not parse: kExitUsage, except for `gpuscale health`,
// whose 1 and 2 are verdicts (its bad input exits 5, health::kHealthCannotCheck; docs/health.md).
int usage_exit_code(int argc, char** argv) {
  using namespace gpuscale;
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return std::strcmp(argv[i], "health") == 0 ? int{health::kHealthCannotCheck} : int{kExitUsage};
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuscale;
  std::string built;
  for (const auto& c : compiled_backends()) built += (built.empty() ? "" : ", ") + c;
  CLI::App app{"gpuscale: distributed GPU benchmark and scaling suite"};
  // The CUDA backend's libraries are looked up only when asked for: --version says which it would load.
  app.set_version_flag("--version", std::function<std::string()>([built] {
    auto text = fmt::format("gpuscale {} (commit {}; backends: {})", GPUSCALE_VERSION, GPUSCALE_GIT_COMMIT, built);
    for (const auto& line : cuda_module_report()) text += "\n" + line;
    return text;
  }));
  app.require_subcommand(1);
  Action action;
  add_run_command(app, action, argc, argv);
  add_list_command(app, action);
  add_validate_command(app, action);
  add_seal_command(app, action);
  add_merge_command(app, action, argc, argv);
  add_report_command(app, action);
  add_compare_command(app, action);
  add_check_command(app, action);
  add_reference_command(app, action);
  add_health_command(app, action);
  add_history_command(app, action);
  add_plan_command(app, action);
  add_import_command(app, action, argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    // CLI11 (2.x) lists the unexpected arguments last first ("1 -c float -d"): say them in their order.
    if (launcher_rank() <= 0) fmt::print(stderr, "gpuscale: {} (see gpuscale --help)\n", message_line(extras_message(app, e)));
    return usage_exit_code(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Every rank of a launch parses the same command line: one of them says what is wrong.
    if (launcher_rank() <= 0) fmt::print(stderr, "gpuscale: {} (see gpuscale --help)\n", message_line(e.what()));
    return usage_exit_code(argc, argv);
  } catch (const Error& e) {
    if (launcher_rank() <= 0) fmt::print(stderr, "gpuscale: {}\n", message_line(e.what()));
    return e.exit_code();
  }
  try {
    return action ? action() : kExitUsage;
  } catch (const Error& e) {
    fmt::print(stderr, "gpuscale: {}\n", message_line(e.what()));
    return e.exit_code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "gpuscale: internal error: {}\n", message_line(e.what()));
    return kExitInvalidResult;
  }
}
