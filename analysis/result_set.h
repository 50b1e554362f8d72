#pragma once
// A result file loaded for analysis: the validated header and its rows as ResultRow. Every reader
// (validate, report, compare, check, reference, merge) loads through here, so a bad file is refused the
// same way everywhere: one line "<file>: <problem>" and exit code 2. Files are read a row at a time
// (results/result_stream.h): the document's JSON rows are never held next to the converted ones.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/result_file.h"
#include "results/result_stream.h"

namespace gpuscale {

struct LoadedResult {
  std::string path;   // as given on the command line (or a label for in-memory documents)
  nlohmann::json doc;            // the document without its rows ("results" is []), as version 2
  int version = 0;               // the file's own schema_version (1 or 2; results/result_upgrade.h)
  std::vector<ResultRow> rows;
  std::string cluster;                     // cluster.name
  std::vector<std::string> device_models;  // distinct ranks[].device.name, in rank order
  SemanticReport semantics;  // the file's contradictions (empty unless read with Contradictions::report)
};

// Reads, validates (schema and the fields analysis relies on) and converts a result file, a row at a
// time. Throws gpuscale::Error("<file>: <problem>").
// What a reader keeps of each row: everything, or the row without its per-rank entries (compare,
// check and reference judge rows, not ranks: the noise band stays, as the row's spread). At 4,096
// ranks the per-rank entries are nearly all of a loaded file's memory.
enum class RowDetail { every_rank, rows_only };
// `whole_row`, when given, sees each row whole (before rows_only drops its ranks): merge keeps its text.
// A file that contradicts itself is refused (results/result_semantics.h), unless `contradictions` is
// report: then they come back in LoadedResult::semantics (validate, and --lenient through
// mark_untrusted).
LoadedResult load_result(const std::string& path, RowDetail detail = RowDetail::every_rank,
                         const std::function<void(ResultRow&)>& whole_row = {},
                         Contradictions contradictions = Contradictions::refuse);
// --lenient (report, compare): the file read even when it contradicts itself. Each row a contradiction
// concerns (every row, when it concerns the file as a whole) is flagged "untrusted" with the
// contradiction as its reason, which every output shows (analysis/row_text.h), and one warning line
// goes to stderr. A figure no reader can use (SemanticReport::unreadable) is refused all the same.
LoadedResult load_result_lenient(const std::string& path, RowDetail detail = RowDetail::every_rank);
// The same from text in memory (fuzz inputs, tests).
LoadedResult load_result_text(const std::string& label, const std::string& text);
// The same checks and conversion for a document already in memory (the run's own, tests); its rows
// are converted one by one and their JSON released. With Contradictions::report it is read as
// --lenient reads a file (the contradictions in LoadedResult::semantics), for the code that must cope.
LoadedResult result_from_json(const std::string& label, nlohmann::json doc,
                              Contradictions contradictions = Contradictions::refuse);

// ranks[] entry of the run for a row's rank (matched on rank and host, so merged files stay right);
// nullptr when the file has none.
const nlohmann::json* rank_identity(const nlohmann::json& doc, int rank, const std::string& host);
// A string from ranks[].device.details (e.g. "uuid", "pci_bus_id"), or "-" when absent.
std::string device_detail(const nlohmann::json* identity, const char* key);

}  // namespace gpuscale
