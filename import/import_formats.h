#pragma once
// The peer formats gpuscale import reads, one reader each (import/<peer>.cpp), by name, and how
// --format auto tells them apart (each format's own first lines). docs/usage.md lists them.
#include <string>
#include <vector>

#include "import/imported_run.h"

namespace gpuscale {

struct ImportOptions {
  std::string format = "auto";  // one of import_format_names(), or "auto"
  std::string collective;       // nccl-tests before 2.18: the binary (--collective)
  std::string backend;          // BabelStream when its output does not say (--backend)
};

// "nvbandwidth-json", "nccl-tests-json", "babelstream-csv", "babelstream", "nccl-tests", "nvbandwidth".
const std::vector<std::string>& import_format_names();

// Reads one file in its format (named, or detected); throws gpuscale::Error ("FILE:LINE: problem", exit 2).
ImportedInput read_import_file(const std::string& path, const ImportOptions& opts);

}  // namespace gpuscale
