#pragma once
// Where the analysis commands write: files (atomically, never over an existing file unless --force,
// never over one of the inputs) or "-" for standard output (at most one output may take it).
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale {

// An output a command writes on request: the option that asks for it and where to, its help line, and
// whether '-' (standard output) may take it. The report's formats (analysis/reporter.h) and the JUnit of
// compare and check (analysis/suite_reporter.h) are ones; the command registers each from its table
// (cli/format_options.h).
class OutputFormat {
 public:
  virtual ~OutputFormat() = default;
  virtual std::string_view flag() const = 0;  // "--markdown"
  virtual std::string_view help() const = 0;  // "write Markdown"; the command adds what it writes of its own
  virtual bool may_write_stdout() const = 0;  // a format that cannot take '-' is refused it by name
};

struct OutputRequest {
  std::string flag;  // "--html", for messages
  std::string path;  // "-" for standard output
  std::string text;  // filled in after the checks pass
};

// Checks every requested output before anything is computed or written; throws gpuscale::Error.
void check_outputs(const std::vector<OutputRequest>& outputs, bool force, const std::vector<std::string>& inputs);
// Writes every output; "-" to standard output.
void write_outputs(const std::vector<OutputRequest>& outputs, bool force);
bool any_to_stdout(const std::vector<OutputRequest>& outputs);

}  // namespace gpuscale
