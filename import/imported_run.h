#pragma once
// What a peer's output says, in gpuscale's words, before it becomes a result file
// (import/import_document.h): one ImportedInput per file read, each parser (import/<peer>.cpp) filling
// it from its format. A figure the input does not give stays absent, and `missing` says which and why,
// so the result file carries null with the reason, never a guess.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/result_file.h"

namespace gpuscale {

// One rank (a GPU, or the one process of a single-device tool) as the input names it.
struct ImportedRank {
  int rank = 0;
  std::string host;         // as printed; "" when the input names no host
  int device = 0;           // the device ordinal on its host
  std::string device_name;  // "" when not printed
  std::string pci_bus_id;   // "" when not printed
  std::optional<long long> pid;
};

// One result row: the figures the input printed for one (benchmark, params) on `ranks`.
struct ImportedRow {
  std::string benchmark;  // a gpuscale registry key
  std::string scope;      // "independent" or "collective"
  nlohmann::json params = nlohmann::json::object();
  std::string unit = "GB/s";
  RowStatus status = RowStatus::ok;
  std::optional<double> aggregate;  // in the row's unit; absent when the input does not give it
  nlohmann::json metrics = nlohmann::json::object();       // row metrics, gpuscale's units
  nlohmann::json rank_metrics = nlohmann::json::object();  // the same for every rank of the row
  std::vector<std::string> errors;
  std::vector<int> ranks;  // indexes into ImportedInput::ranks (rank numbers)
  int line = 0;            // where the input printed it (1-based; 0: not from a line)
};

struct ImportedInput {
  std::string file;     // as given on the command line
  std::string format;   // the format read: "nccl-tests", "babelstream-csv", ...
  std::string tool;     // "nccl-tests", "BabelStream", "nvbandwidth"
  std::optional<std::string> tool_version;  // absent when the input does not print it
  std::string backend;  // "cuda" or "cpu": what the tool ran on
  // The tool's own command line when the input records it; else absent with the reason.
  std::optional<std::vector<std::string>> command_line;
  std::string command_line_note;
  std::optional<std::string> started;  // the input's own start time, as it wrote it (local time, no zone)
  nlohmann::json software = nlohmann::json::object();  // nccl, cuda_runtime, driver: as the input names them
  std::vector<ImportedRank> ranks;
  std::vector<ImportedRow> rows;
  std::vector<std::string> missing;  // "figure: why it is not in the input", once per input
  std::vector<std::string> notes;    // what else the reader should know (its footer, what was skipped)
};

}  // namespace gpuscale
