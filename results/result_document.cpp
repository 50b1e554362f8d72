#include "results/result_document.h"

#include "core/error.h"

namespace gpuscale {

std::string result_row_line(const nlohmann::json& row) { return row.dump(); }

std::string result_document_text(nlohmann::json header, const std::vector<std::string>& row_lines) {
  header["results"] = nlohmann::json::array();
  std::string text = header.dump(1) + "\n";
  if (row_lines.empty()) return text;
  // dump(1) puts each top-level key on its own line after one space of indentation, and the keys of
  // one object are unique, so this line is the top-level empty "results" array and nothing else.
  static const std::string marker = "\n \"results\": []";
  const auto at = text.find(marker);
  if (at == std::string::npos) throw Error("internal error: no results array in the result header");
  std::size_t bytes = 0;
  for (const auto& l : row_lines) bytes += l.size() + 2;
  std::string rows = "\n \"results\": [\n";
  rows.reserve(bytes + 32);
  for (std::size_t i = 0; i < row_lines.size(); ++i) {
    rows += row_lines[i];
    rows += i + 1 < row_lines.size() ? ",\n" : "\n";
  }
  rows += " ]";
  text.replace(at, marker.size(), rows);
  return text;
}

}  // namespace gpuscale
