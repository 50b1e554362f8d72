#pragma once
// Reading a result file a row at a time, so that a reader's memory holds the converted rows and never
// the whole document next to them. The file is parsed as a stream with every check of
// results/result_io.h (size, nesting depth, strict JSON, duplicate keys, UTF-8); each element of the
// top-level "results" array is validated against the row schema of its version as soon as it is
// complete, converted to ResultRow, handed to the sink and dropped. The header (the document with
// "results": []) is kept and validated against the schema of its schema_version. Either version is
// read; what the sink and the caller get is version 2 (results/result_upgrade.h).
//
// A problem is reported as the whole-document reader would: the header's first (not a result, a
// version not read, the schema), then the first row's; one line "<file>: <problem>".
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "results/result_file.h"
#include "results/result_semantics.h"

namespace gpuscale {

// Rows are converted as they are read, so memory grows with the ResultRows (a few times the compact
// text of a version-2 row), not with a DOM of the file; files up to this size are read.
inline constexpr std::uintmax_t kMaxStreamedResultBytes = 4ULL << 30;

struct StreamedResult {
  nlohmann::json header;  // the validated document without its rows ("results": []), as version 2
  int version = 0;        // the file's own schema_version
  std::size_t rows = 0;   // how many rows the sink was given
  SemanticReport semantics;  // what the file contradicts in itself (results/result_semantics.h)
};

// After the schema, every read runs the semantic validator. A file that contradicts itself is refused
// with the first contradiction (refuse), or read with them all in StreamedResult::semantics (report:
// `gpuscale validate`, and `--lenient` readers, which mark what they concern).
enum class Contradictions { refuse, report };

// Given each row in file order with its index. May throw gpuscale::Error naming the file: the read
// then fails with that message (after the header's problems, if any).
using ResultRowSink = std::function<void(ResultRow&& row, std::size_t index)>;

// Throws gpuscale::Error("<file>: <problem>").
StreamedResult stream_result_file(const std::filesystem::path& path, const ResultRowSink& sink,
                                  Contradictions contradictions = Contradictions::refuse);
// The same on text already in memory (what travels over MPI, tests, fuzz inputs).
StreamedResult stream_result_text(const std::string& text, const std::string& name, const ResultRowSink& sink,
                                  Contradictions contradictions = Contradictions::refuse);

// The whole file as one validated document as this version writes it (a version-1 file comes out
// version 2), read a row at a time: the rows are held once, as JSON, never next to
// a DOM of the file. For --resume and gpuscale seal, which keep rows as JSON.
nlohmann::json read_result_document(const std::filesystem::path& path);

}  // namespace gpuscale
