#pragma once
// The result file's text: the header (every top-level field but "results") indented, except its
// per-rank and per-host lists, one entry per line, and the rows one per line as compact JSON. A row's line is the same text its journal line carries
// (harness/guard/result_keeper.h), so assembling the file copies bytes and never re-encodes a row, and a
// reader (or grep, or jq) can take the file a row at a time.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuscale {

// One row as it is written: compact JSON, no newline.
std::string result_row_line(const nlohmann::json& row);

// The whole document: `header` (its own "results", if any, is ignored) with `row_lines` (each from
// result_row_line) as its "results" array. Ends with a newline.
std::string result_document_text(nlohmann::json header, const std::vector<std::string>& row_lines);

}  // namespace gpuscale
