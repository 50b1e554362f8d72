#include "results/result_journal.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "core/shown_text.h"
#include "core/term_text.h"
#include "results/result_file.h"
#include "results/result_io.h"

namespace gpuscale {

std::string journal_path_for(const std::string& result_path) { return result_path + ".journal"; }

std::string journal_header_line(const std::string& run_id, int attempt) {
  const nlohmann::json h = {{"journal", kJournalName}, {"version", kJournalVersion}, {"run_id", run_id}, {"attempt", attempt}};
  return json_terminal_safe(h.dump()) + "\n";
}

namespace {

// A row line must at least be an object naming its benchmark, params and GPU count: what the resume
// keys it on. The row's full checks come when it is converted (harness/run/resume.cpp).
bool looks_like_row(const nlohmann::json& j) {
  return j.is_object() && j.contains("benchmark") && j["benchmark"].is_string() && j.contains("params") &&
         j["params"].is_object() && j.contains("gpu_count") && j["gpu_count"].is_number_integer() &&
         j.contains("status") && j["status"].is_string();
}

}  // namespace

JournalLines parse_journal(const std::string& text, const std::string& name) {
  JournalLines out;
  const auto first_end = text.find('\n');
  if (first_end == std::string::npos) throw Error(fmt::format("{}: not a gpuscale journal (no whole first line)", name));
  nlohmann::json head;
  try {
    head = parse_json_text(text.substr(0, first_end), name);
  } catch (const Error&) {
    throw Error(fmt::format("{}: not a gpuscale journal (its first line is not JSON)", name));
  }
  if (!head.is_object() || head.value("journal", nlohmann::json()) != kJournalName || !head.contains("run_id") ||
      !head["run_id"].is_string() || !head.contains("version") || !head["version"].is_number_integer())
    throw Error(fmt::format("{}: not a gpuscale journal (its first line is not a journal header)", name));
  if (head["version"].get<long long>() != kJournalVersion)
    throw Error(fmt::format("{}: journal version {} (this gpuscale reads version {})", name,
                            head["version"].dump().substr(0, 20), kJournalVersion));
  out.run_id = head["run_id"].get<std::string>();
  if (head.contains("attempt") && head["attempt"].is_number_integer()) out.attempt = head["attempt"].get<int>();

  std::size_t pos = first_end + 1, line = 1;
  while (pos < text.size()) {
    ++line;
    const auto end = text.find('\n', pos);
    if (end == std::string::npos) {  // the last write was cut short: nothing after it can be proven
      out.truncated.push_back(line);
      break;
    }
    const std::string body = text.substr(pos, end - pos);
    pos = end + 1;
    try {
      auto row = parse_json_text(body, name);
      if (looks_like_row(row)) {
        out.rows.emplace_back(line, std::move(row));
        continue;
      }
    } catch (const Error&) {
    }
    out.unreadable.push_back(line);
  }
  return out;
}

std::optional<JournalLines> read_journal_file(const std::string& path, std::uintmax_t max_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // The entry itself, not what it points to: through a link that loops or dangles the journal "does not
  // exist", so seal said "nothing to seal" and --resume rewrote the file and then failed writing through
  // the link. gpuscale writes its journal as a plain file; anything else in its place is refused now.
  const auto entry = fs::symlink_status(path, ec);
  if (entry.type() == fs::file_type::not_found) return std::nullopt;
  if (ec) throw Error(fmt::format("{}: cannot read it: {}", path, ec.message()));
  if (fs::is_symlink(entry))
    throw Error(fmt::format("{}: a symbolic link, not the plain file gpuscale writes as a journal: refused (move it away)", path));
  if (!fs::is_regular_file(entry)) throw Error(fmt::format("{}: not a regular file, so not a journal: refused", path));
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(fmt::format("{}: cannot read it: {}", path, ec.message()));
  if (size > max_bytes) throw Error(fmt::format("{}: {} bytes, more than the {} a journal may have", path, size, max_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot read it", path));
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return parse_journal(text, path);
}

namespace {

using nlohmann::json;

std::string shown(const json& j) { return terminal_quote(j.dump(), 80); }
std::string point_key(const json& benchmark, const json& params) { return benchmark.dump() + "|" + params.dump(); }

}  // namespace

std::string adopt_journal(nlohmann::json& doc, const JournalLines& journal, const std::string& file) {
  const std::string name = terminal_safe(file);
  const json& id = doc.contains("run_id") ? doc.at("run_id") : json(nullptr);
  if (!id.is_string() || id.get<std::string>() != journal.run_id)
    throw Error(fmt::format("{}: {} belongs to another run (run_id {}, the file's is {}): move it away to use the file "
                            "alone",
                            name, terminal_safe(journal_path_for(file)), shown(json(journal.run_id)), shown(id)));
  std::set<std::string> planned, seen;
  if (doc.at("plan").contains("point_list"))
    for (const auto& p : doc.at("plan").at("point_list"))
      if (p.is_object() && p.contains("benchmark") && p.contains("params"))
        planned.insert(point_key(p.at("benchmark"), p.at("params")));
  auto row_id = [](const json& row) { return point_key(row.at("benchmark"), row.at("params")) + "|" + row.at("gpu_count").dump(); };
  for (const auto& row : doc.at("results")) seen.insert(row_id(row));
  std::vector<std::size_t> repeated, outside, unreadable = journal.unreadable;
  std::set<std::string> from_journal;
  std::size_t taken = 0;
  for (const auto& [line, row] : journal.rows) {
    const auto key = row_id(row);
    if (!planned.count(point_key(row.at("benchmark"), row.at("params")))) {
      outside.push_back(line);
    } else if (from_journal.count(key)) {
      repeated.push_back(line);
    } else if (!seen.count(key)) {
      try {
        (void)row.get<ResultRow>();  // a whole row, or not proven
      } catch (const std::exception&) {
        unreadable.push_back(line);
        continue;
      }
      doc["results"].push_back(row);
      ++taken;
    }
    from_journal.insert(key);
  }
  std::sort(unreadable.begin(), unreadable.end());
  std::vector<std::string> left;
  if (!journal.truncated.empty()) left.push_back(fmt::format("a cut-short last line ({})", line_list(journal.truncated)));
  if (!unreadable.empty()) left.push_back(fmt::format("{} unreadable ({})", unreadable.size(), line_list(unreadable)));
  if (!repeated.empty()) left.push_back(fmt::format("{} repeated row(s) ({})", repeated.size(), line_list(repeated)));
  if (!outside.empty())
    left.push_back(fmt::format("{} row(s) outside the file's plan ({})", outside.size(), line_list(outside)));
  if (left.empty()) return "";
  std::string out = fmt::format("{}: took {} row(s); left out ", terminal_safe(journal_path_for(file)), taken);
  for (std::size_t i = 0; i < left.size(); ++i) out += (i ? "; " : "") + left[i];
  return out;
}

std::string line_list(const std::vector<std::size_t>& lines, std::size_t most) {
  std::string out = lines.size() == 1 ? "line " : "lines ";
  const std::size_t shown = std::min(lines.size(), most);
  for (std::size_t i = 0; i < shown; ++i) {
    const bool last = i + 1 == shown && shown == lines.size();
    out += (i == 0 ? "" : last ? " and " : ", ") + std::to_string(lines[i]);
  }
  if (lines.size() > shown) out += fmt::format(" and {} more", lines.size() - shown);
  return out;
}

}  // namespace gpuscale
