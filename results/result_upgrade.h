#pragma once
// Version 1 at the edge: the one place that knows a result file of schema version 1. Every reader
// takes a file's rows and header through here (results/result_stream.h for files and text,
// analysis/result_set.h for documents in memory), and what comes out is version 2: a row as ResultRow
// as the version-2 reader makes it, a header with schema_version 2. Nothing below knows version 1.
//
// Version 1 (results/schema/result-v1.schema.json) wrote each row's ranks and groups as arrays of
// objects, every rank with its repetition statistics, and had no spread (it follows from the ranks).
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "results/result_file.h"

namespace gpuscale {

// Reads the elements of one file's "results" array, of either version, and remembers which versions
// it saw, so that a row of the other version than the file's is refused once the header is known (a
// streamed file's schema_version may come after its rows).
class ResultRowUpgrader {
 public:
  // Element `index`: validated against the row schema of its version (by its shape: "ranks" an array
  // is version 1) and converted into `out`. Returns "" or the problem, as the readers report it after
  // "<file>: " (a schema problem, or "/results/<index>..." naming the field).
  std::string read(const nlohmann::json& element, std::size_t index, ResultRow& out);
  // "" when every row read is of `file_version`, else the problem naming the first that is not.
  std::string check_file_version(int file_version) const;

 private:
  std::size_t first_v1_ = SIZE_MAX, first_v2_ = SIZE_MAX;
};

// The header of a file, already validated against its version's schema, as version 2: a version-1
// header differs only in schema_version (version 2 added optional fields: run_id, reliability's
// journal). A version-2 header is returned as it is.
nlohmann::json upgrade_result_header(nlohmann::json header);

// A whole document, already validated against its version's schema (rows not yet), as version 2: a
// version-2 document as it is, a version-1 one with each row validated, converted and written as
// version 2 writes it. For the whole-document readers (results/result_io.h). Throws
// gpuscale::Error("<name>: <problem>").
nlohmann::json upgrade_result_document(nlohmann::json doc, const std::string& name);

// A version-1 row, already validated against version 1's row schema, as ResultRow. Throws
// nlohmann::json::exception or gpuscale::Error (naming the field) on a row it cannot take.
ResultRow result_row_from_v1(const nlohmann::json& row);

}  // namespace gpuscale
