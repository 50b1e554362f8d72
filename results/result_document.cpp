#include "results/result_document.h"

#include "core/error.h"
#include "core/shown_text.h"

namespace gpuscale {
namespace {

// The top-level arrays written one element per line: the rows, and the header's per-rank and per-host
// lists (at 10,000 ranks those are most of the header, and indentation would double them).
constexpr const char* kLineArrays[] = {"ranks", "hosts"};

// Replaces the top-level `"key": []` of `text` (dump(1): each top-level key on its own line after one
// space of indentation, and an object's keys are unique, so that line is the one) with the array of
// `lines`, one per line.
void splice(std::string& text, const std::string& key, const std::vector<std::string>& lines) {
  if (lines.empty()) return;
  const std::string marker = "\n \"" + key + "\": []";
  const auto at = text.find(marker);
  if (at == std::string::npos) throw Error("internal error: no " + key + " array in the result header");
  std::size_t bytes = 0;
  for (const auto& l : lines) bytes += l.size() + 2;
  std::string out = "\n \"" + key + "\": [\n";
  out.reserve(bytes + 32);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    out += lines[i];
    out += i + 1 < lines.size() ? ",\n" : "\n";
  }
  out += " ]";
  text.replace(at, marker.size(), out);
}

}  // namespace

// DEL and C1 controls in strings as \u escapes (core/term_text.h): a file shown on a terminal stays inert.
std::string result_row_line(const nlohmann::json& row) { return json_terminal_safe(row.dump()); }

std::string result_document_text(nlohmann::json header, const std::vector<std::string>& row_lines) {
  std::vector<std::pair<std::string, std::vector<std::string>>> arrays;
  for (const char* key : kLineArrays) {
    auto it = header.find(key);
    if (it == header.end() || !it->is_array() || it->empty()) continue;
    std::vector<std::string> lines;
    lines.reserve(it->size());
    for (const auto& e : *it) lines.push_back(json_terminal_safe(e.dump()));
    arrays.emplace_back(key, std::move(lines));
    *it = nlohmann::json::array();
  }
  header["results"] = nlohmann::json::array();
  std::string text = json_terminal_safe(header.dump(1)) + "\n";
  for (const auto& [key, lines] : arrays) splice(text, key, lines);
  splice(text, "results", row_lines);
  return text;
}

}  // namespace gpuscale
