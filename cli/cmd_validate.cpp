// gpuscale validate FILE...: check result files against the result schema of their version.
#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "cli/commands.h"
#include "analysis/result_set.h"

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
          // The checks every reader makes (analysis/result_set.h): the schema, a row at a time, then the
          // rows against themselves and the world. Rows are kept without their rank entries.
          const auto read = load_result(f, RowDetail::rows_only);
          fmt::print("{}: valid gpuscale result (schema version {}, {} rows)\n", f, read.version, read.rows.size());
        } catch (const Error& e) {
          fmt::print(stderr, "gpuscale: {}\n", message_line(e.what()));
          ++bad;
        }
      }
      return bad ? kExitUsage : kExitOk;
    };
  });
}

}  // namespace gpuscale
