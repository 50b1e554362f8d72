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
// needs: exists, not empty, at most max_bytes, nesting at most kMaxJsonDepth, valid JSON. Throws
// gpuscale::Error("<file>: <problem>").
inline constexpr int kMaxJsonDepth = 64;
nlohmann::json read_json_file(const std::filesystem::path& path, std::uintmax_t max_bytes);

// Validates a document against the embedded result schema; returns "" when valid, else the first
// problems found (JSON pointer and reason).
std::string validate_result_json(const nlohmann::json& doc);

// Reads, parses and validates a result file. Throws gpuscale::Error("<file>: <problem>").
nlohmann::json read_result_file(const std::filesystem::path& path);

// The schema document itself (as shipped in results/schema/result-v1.schema.json).
const std::string& result_schema_text();

}  // namespace gpuscale
