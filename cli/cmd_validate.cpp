// gpuscale validate FILE...: check result files against the result schema of their version, then for
// what they say of themselves (results/result_semantics.h): each contradiction named, one line each.
#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "cli/commands.h"
#include "analysis/result_set.h"

namespace gpuscale {

namespace {
constexpr std::size_t kShown = 20;  // contradictions named per file; the rest counted
}

void add_validate_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "validate", "check result files against the result schema (versions 1 and 2) and for contradictions in themselves");
  auto files = std::make_shared<std::vector<std::string>>();
  cmd->add_option("files", *files, "result JSON files")->required();
  cmd->callback([&action, files] {
    action = [files]() -> int {
      int bad = 0;
      for (const auto& f : *files) {
        try {
          // The checks every reader makes (analysis/result_set.h): the schema, a row at a time, then the
          // rows against themselves and the header, every contradiction kept. Rows are kept without
          // their rank entries.
          const auto read = load_result(f, RowDetail::rows_only, {}, Contradictions::report);
          const auto& s = read.semantics;
          if (s.empty()) {
            fmt::print("{}: valid gpuscale result (schema version {}, {} rows)\n", terminal_safe(f), read.version, read.rows.size());
            continue;
          }
          ++bad;
          fmt::print(stderr, "gpuscale: {}: contradicts itself in {} place{}:\n", terminal_safe(f), s.total, s.total == 1 ? "" : "s");
          for (std::size_t i = 0; i < s.found.size() && i < kShown; ++i) fmt::print(stderr, "  {}\n", message_line(s.found[i].text));
          if (s.total > kShown) fmt::print(stderr, "  ... and {} more\n", s.total - kShown);
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
