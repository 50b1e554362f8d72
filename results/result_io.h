#pragma once
// Reading and writing result files safely: writes are atomic (temporary file in the same directory,
// fsync, rename), so a reader never sees half a file; reads reject anything that is not a valid
// result of a version gpuscale reads (schema check) with one line naming the file and the problem.
// results/result_stream.h reads a result a row at a time; the whole-document readers here serve the
// few that need the rows as JSON (resume) and inputs already in memory.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <istream>
#include <string>

#include <nlohmann/json.hpp>

#include "results/result_schema.h"

namespace gpuscale {

// Throws gpuscale::Error unless `path` can be created or replaced (its directory exists and is
// writable). Checked before anything is measured.
void check_output_path(const std::filesystem::path& path);

// Writes `text` to `path` atomically. Throws gpuscale::Error on failure. With replace == false an
// existing file is never overwritten (the new file is linked into place, which fails if one exists).
void write_file_atomic(const std::filesystem::path& path, const std::string& text, bool replace = true);

// Reads and parses any JSON input file (result files, reference files) with the checks every reader
// needs: exists, not empty, at most max_bytes, then parse_json_text. Throws
// gpuscale::Error("<file>: <problem>").
inline constexpr int kMaxJsonDepth = 64;
nlohmann::json read_json_file(const std::filesystem::path& path, std::uintmax_t max_bytes);
// The file checks of read_json_file (exists, a file, not empty, at most max_bytes), then the file opened.
std::ifstream open_input_file(const std::filesystem::path& path, std::uintmax_t max_bytes);

// Parses JSON text from an untrusted source (`name` labels the messages): not empty, nesting at most
// kMaxJsonDepth, strict JSON (no NaN, Infinity, comments or trailing commas; numbers in range; valid
// UTF-8 in strings), and no object with the same key twice: a duplicate key is refused rather than
// silently resolved, since readers disagree on which copy wins (docs/reliability.md).
// With a hook, each complete element of the top-level "results" array is handed to it (with its
// index) as soon as it is parsed, then dropped: the document comes back with "results": [].
using ResultsElementHook = std::function<void(nlohmann::json& element, std::size_t index)>;
nlohmann::json parse_json_text(const std::string& text, const std::string& name, const ResultsElementHook& hook = {});
// The same from a stream (a file read as it is parsed); an empty stream is "not valid JSON".
nlohmann::json parse_json_stream(std::istream& in, const std::string& name, const ResultsElementHook& hook = {});

// The largest result file the whole-document readers below take (the document is held as a DOM).
inline constexpr std::uintmax_t kMaxResultBytes = 256ULL << 20;

// Reads, parses and validates a whole result file (rows as JSON; a version-1 file comes out version 2,
// results/result_upgrade.h). Throws gpuscale::Error("<file>: <problem>").
nlohmann::json read_result_file(const std::filesystem::path& path);
// The same checks on text already in memory (what travels over MPI, fuzz inputs).
nlohmann::json parse_result_text(const std::string& text, const std::string& name);

}  // namespace gpuscale
