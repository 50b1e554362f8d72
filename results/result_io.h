#pragma once
// Reading and writing result files safely: writes are atomic (temporary file in the same directory,
// fsync, rename), so a reader never sees half a file; reads reject anything that is not a valid
// version-1 result (schema check) with one line naming the file and the problem.
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

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

// Parses JSON text from an untrusted source (`name` labels the messages): not empty, nesting at most
// kMaxJsonDepth, strict JSON (no NaN, Infinity, comments or trailing commas; numbers in range; valid
// UTF-8 in strings), and no object with the same key twice: a duplicate key is refused rather than
// silently resolved, since readers disagree on which copy wins (docs/reliability.md).
nlohmann::json parse_json_text(const std::string& text, const std::string& name);

// Validates a document against the embedded result schema; returns "" when valid, else the first
// problems found (JSON pointer and reason).
std::string validate_result_json(const nlohmann::json& doc);

// Reads, parses and validates a result file. Throws gpuscale::Error("<file>: <problem>").
nlohmann::json read_result_file(const std::filesystem::path& path);
// The same checks on text already in memory (what travels over MPI, fuzz inputs).
nlohmann::json parse_result_text(const std::string& text, const std::string& name);

// The schema document itself (as shipped in results/schema/result-v1.schema.json).
const std::string& result_schema_text();

}  // namespace gpuscale
