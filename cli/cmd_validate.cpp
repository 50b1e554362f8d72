// gpuscale validate FILE...: check result files against the result schema of their version.
#include <fmt/format.h>

#include "core/error.h"
#include "cli/commands.h"
#include "results/result_stream.h"

namespace gpuscale {

void add_validate_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("validate", "check result files against the result schema (versions 1 and 2)");
  auto files = std::make_shared<std::vector<std::string>>();
  cmd->add_option("files", *files, "result JSON files")->required();
  cmd->callback([&action, files] {
    action = [files]() -> int {
      int bad = 0;
      for (const auto& f : *files) {
        try {
          // A row at a time: each row is checked and converted as it is read, then dropped.
          const auto read = stream_result_file(f, [](ResultRow&&, std::size_t) {});
          fmt::print("{}: valid gpuscale result (schema version {}, {} rows)\n", f, read.version, read.rows);
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
