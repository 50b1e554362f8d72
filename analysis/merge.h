#pragma once
// gpuscale merge: several result files (for example a scaling campaign's 1-, 2- and 4-node jobs) become
// one result set, itself a valid version-1 result (cluster.source "merge"). docs/results.md describes
// the merged document; the rules, in short:
//   - rows are copied unchanged and keyed by (benchmark, params, gpu_count); when several inputs hold the
//     same key, one row is kept: a measured row (ok or invalid) beats an unmeasured one (failed,
//     skipped), then the input with the larger MPI world wins, then the later input on the command line.
//     Each kept row names its input in `input` (an index into merged_from).
//   - the header (MPI, software, links, ranks, plan seed and options) is the base input's: the one with
//     the largest world; hosts seen only in other inputs are appended.
//   - `merged_from` lists every input: file, status (merged, unreadable, rejected), error, job, world
//     size, completeness, and how many of its rows were kept or superseded.
//   - an input that cannot be read, or measured with another backend, is listed and left out; the
//     others are still merged.
// Pure functions on JSON documents, so the rules are unit-tested without files.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuscale {

struct MergeInput {
  std::string file;
  nlohmann::json doc;  // a valid v1 result, or null when `error` says why the file could not be read
  std::string error;
};

struct MergeContext {
  std::vector<std::string> command_line;  // argv of gpuscale merge
  std::string tool_version, tool_commit;  // of the merging binary
};

struct MergeOutcome {
  nlohmann::json merged;              // the merged result document
  std::vector<std::string> problems;  // one line per input left out ("FILE: why")
};

// Throws gpuscale::Error when no input can be merged.
MergeOutcome merge_results(const std::vector<MergeInput>& inputs, const MergeContext& ctx);

}  // namespace gpuscale
