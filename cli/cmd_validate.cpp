// gpuscale validate FILE...: check result files against the result schema.
#include <fmt/format.h>

#include "core/error.h"
#include "cli/commands.h"
#include "results/result_io.h"

namespace gpuscale {

void add_validate_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("validate", "check result files against the result schema (version 1)");
  auto files = std::make_shared<std::vector<std::string>>();
  cmd->add_option("files", *files, "result JSON files")->required();
  cmd->callback([&action, files] {
    action = [files]() -> int {
      int bad = 0;
      for (const auto& f : *files) {
        try {
          read_result_file(f);
          fmt::print("{}: valid gpuscale result (schema version 1)\n", f);
        } catch (const Error& e) {
          fmt::print(stderr, "gpuscale: {}\n", e.what());
          ++bad;
        }
      }
      return bad ? kExitUsage : kExitOk;
    };
  });
}

}  // namespace gpuscale
