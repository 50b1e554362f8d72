#pragma once
// gpuscale merge: several result files (for example a scaling campaign's 1-, 2- and 4-node jobs) become
// one result set, itself a valid result of the current version (cluster.source "merge"; inputs of
// either version, a version-1 file's rows written as version 2). docs/results.md describes the merged
// document; the rules, in short:
//   - rows are copied unchanged (as ResultRow: nothing of a row is lost) and keyed by (benchmark, params, gpu_count); when several inputs hold the
//     same key, one row is kept: a measured row (ok or invalid) beats an unmeasured one (failed,
//     skipped), then the input with the larger MPI world wins, then the later input on the command line.
//     Each kept row names its input in `input` (an index into merged_from).
//   - the header (MPI, software, links, ranks, plan seed and options) is the base input's: the one with
//     the largest world; hosts seen only in other inputs are appended.
//   - `merged_from` lists every input: file, status (merged, unreadable, rejected), error, job, world
//     size, completeness, and how many of its rows were kept or superseded.
//   - an input that cannot be read, or measured with another backend, is listed and left out; the
//     others are still merged.
// Pure functions on loaded results, so the rules are unit-tested without files.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/result_set.h"

namespace gpuscale {

struct MergeInput {
  std::string file;
  std::optional<LoadedResult> run;  // the loaded file, or nullopt when `error` says why it could not be read
  std::string error;
};

struct MergeContext {
  std::vector<std::string> command_line;  // argv of gpuscale merge
  std::string tool_version, tool_commit;  // of the merging binary
};

struct MergeOutcome {
  nlohmann::json header;              // the merged document without its rows ("results": [])
  std::vector<ResultRow> rows;        // its rows, each naming its input
  std::vector<std::string> problems;  // one line per input left out ("FILE: why")
};

// Throws gpuscale::Error when no input can be merged.
MergeOutcome merge_results(const std::vector<MergeInput>& inputs, const MergeContext& ctx);

// The merged result file's text (results/result_document.h: header indented, one row per line), each
// row and the header checked against the schema on the way. Throws gpuscale::Error (exit 1) if the
// merged document is not a valid result, which would be a bug.
std::string merged_result_text(const MergeOutcome& m);
// The same from the rows' own lines: `lines[i][j]` is row j of input i as written (result_row_line,
// its `input` already i), so a merge of files of millions of rank entries holds their text, not their
// rows (gpuscale merge loads each input with RowDetail::rows_only; docs/scale.md).
std::string merged_result_text(const MergeOutcome& m, const std::vector<MergeInput>& inputs,
                               const std::vector<std::vector<std::string>>& lines);
// The merged document as one JSON value (its rows included), for tests and the fuzz targets.
nlohmann::json merged_document(const MergeOutcome& m);

}  // namespace gpuscale
