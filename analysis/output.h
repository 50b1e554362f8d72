#pragma once
// Where the analysis commands write: files (atomically, never over an existing file unless --force,
// never over one of the inputs) or "-" for standard output (at most one output may take it).
#include <string>
#include <vector>

namespace gpuscale {

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
