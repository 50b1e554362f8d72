#pragma once
// Imported inputs (import/imported_run.h) to one version-2 result file. The header says the file was
// imported and from what (`imported`: per input its file, format, tool and version, its own command line
// or why there is none, the figures it lacks and why), `cluster.source` "import", no seed, no MPI
// library, no link peaks (null with the reason), device memory null; the rows carry the figures the
// inputs printed and null where they printed none. The text is checked as every reader checks a file
// (schema, then the semantic validator) before it is returned, so `gpuscale validate` accepts it.
#include <string>
#include <vector>

#include "import/imported_run.h"

namespace gpuscale {

struct ImportContext {
  std::string tool_version, tool_commit;  // gpuscale's own
  std::vector<std::string> command_line;  // gpuscale import's argv
  std::string now_utc;                    // created_utc and finished_utc: when the import was made
  std::string cluster;                    // --cluster, or "" for the first input's first host
};

// Throws gpuscale::Error (exit 2) naming the files when the inputs cannot be one run: backends that
// differ, a rank that two inputs place on different hosts or devices, the same row twice.
std::string imported_result_text(const std::vector<ImportedInput>& inputs, const ImportContext& ctx);

// The host name written for a rank whose input names none.
inline constexpr const char* kUnnamedHost = "unnamed-host";

}  // namespace gpuscale
