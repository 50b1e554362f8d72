#include "analysis/result_set.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "results/result_io.h"
#include "results/result_schema.h"
#include "results/result_stream.h"
#include "results/result_upgrade.h"
#include "results/row_fields.h"
#include "analysis/row_text.h"

namespace gpuscale {
namespace {

// The header's facts every reader uses; `header` comes without its rows.
LoadedResult finish(const std::string& label, nlohmann::json header, std::vector<ResultRow> rows, SemanticReport semantics) {
  LoadedResult out;
  out.path = label;
  out.rows = std::move(rows);
  out.cluster = header.at("cluster").at("name").get<std::string>();
  for (const auto& r : header.at("ranks")) {
    const auto name = r.at("device").at("name").get<std::string>();
    if (std::find(out.device_models.begin(), out.device_models.end(), name) == out.device_models.end())
      out.device_models.push_back(name);
  }
  header["results"] = nlohmann::json::array();
  out.doc = std::move(header);
  out.semantics = std::move(semantics);
  return out;
}

}  // namespace

LoadedResult result_from_json(const std::string& label, nlohmann::json doc, Contradictions contradictions) {
  if (auto problems = validate_result_json(doc); !problems.empty())
    throw Error(fmt::format("{}: does not match the result schema: {}", label, problems));
  std::vector<ResultRow> rows;
  ResultRowUpgrader upgrader;  // either version's rows, as the streamed readers take them
  ResultChecker checker;
  auto& results = doc.at("results");
  rows.reserve(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    // The document schema leaves rows to the row schema (results/result_schema.h), as the streamed
    // readers apply it: integers beyond their range are refused here, never wrapped by the conversion.
    ResultRow row;
    if (auto problem = upgrader.read(results[i], i, row); !problem.empty())
      throw Error(fmt::format("{}: {}", label, problem));
    checker.row(results[i], row, i);
    rows.push_back(std::move(row));
    results[i] = nullptr;  // converted: its JSON is not needed any more
  }
  const int version = doc.at("schema_version").get<int>();  // valid: one of the versions read
  if (auto problem = upgrader.check_file_version(version); !problem.empty()) throw Error(fmt::format("{}: {}", label, problem));
  auto header = upgrade_result_header(std::move(doc));
  auto semantics = checker.finish(header);
  if (contradictions == Contradictions::refuse && !semantics.empty()) throw Error(refusal_line(semantics, label));
  auto loaded = finish(label, std::move(header), std::move(rows), std::move(semantics));
  loaded.version = version;
  return loaded;
}

LoadedResult load_result(const std::string& path, RowDetail detail, const std::function<void(ResultRow&)>& whole_row,
                         Contradictions contradictions) {
  std::vector<ResultRow> rows;
  auto read = stream_result_file(
      path,
      [&](ResultRow&& row, std::size_t) {
        if (whole_row) whole_row(row);
        if (detail == RowDetail::rows_only) {
          if (!row.spread) row.spread = spread_of_ranks(row.ranks);  // the noise band, before the ranks go
          // Released, not only emptied: `= {}` picks the initializer-list assignment, which keeps the
          // capacity (~200 bytes per rank and row: 0.9 GB of 4,096 ranks x 1,000 rows for validate).
          std::vector<RankValue>().swap(row.ranks);
        }
        rows.push_back(std::move(row));
      },
      contradictions);
  auto loaded = finish(path, std::move(read.header), std::move(rows), std::move(read.semantics));
  loaded.version = read.version;
  return loaded;
}

LoadedResult load_result_lenient(const std::string& path, RowDetail detail) {
  auto run = load_result(path, detail, {}, Contradictions::report);
  const auto& s = run.semantics;
  if (s.empty()) return run;
  if (s.unreadable) {
    const auto it = std::find_if(s.found.begin(), s.found.end(), [](const Contradiction& c) { return c.unreadable; });
    throw Error(fmt::format("{}: {} (not readable even with --lenient)", terminal_safe(path), it->text));
  }
  std::map<std::size_t, std::string> why;  // row -> its first contradiction
  std::string file_wide;
  for (const auto& c : s.found) {
    if (c.row) why.emplace(*c.row, c.text);
    else if (file_wide.empty()) file_wide = c.text;
  }
  for (std::size_t i = 0; i < run.rows.size(); ++i) {
    const auto it = why.find(i);
    const bool listed = std::binary_search(s.untrusted_rows.begin(), s.untrusted_rows.end(), i);
    if (!s.whole_file && !listed) continue;
    const std::string reason = it != why.end() ? it->second : !file_wide.empty() ? file_wide : "a contradiction past the ones kept";
    run.rows[i].flags.push_back({kUntrustedFlag, reason});
  }
  fmt::print(stderr, "gpuscale: warning: {}: contradicts itself in {} place{} (first: {}); --lenient: {} marked UNTRUSTED\n",
             terminal_safe(path), s.total, s.total == 1 ? "" : "s", message_line(s.found.front().text),
             s.whole_file ? "every row is" : fmt::format("{} row{}", s.untrusted_rows.size(), s.untrusted_rows.size() == 1 ? " is" : "s are"));
  return run;
}

LoadedResult load_result_text(const std::string& label, const std::string& text) {
  std::vector<ResultRow> rows;
  auto read = stream_result_text(text, label, [&](ResultRow&& row, std::size_t) { rows.push_back(std::move(row)); });
  auto loaded = finish(label, std::move(read.header), std::move(rows), std::move(read.semantics));
  loaded.version = read.version;
  return loaded;
}

const nlohmann::json* rank_identity(const nlohmann::json& doc, int rank, const std::string& host) {
  if (!doc.contains("ranks")) return nullptr;
  for (const auto& r : doc["ranks"])
    if (r.value("rank", -1) == rank && r.value("host", std::string()) == host) return &r;
  return nullptr;
}

std::string device_detail(const nlohmann::json* identity, const char* key) {
  if (!identity || !identity->contains("device")) return "-";
  const auto& details = (*identity)["device"].value("details", nlohmann::json::object());
  if (!details.is_object() || !details.contains(key)) return "-";
  const auto& v = details[key];
  if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
  return v.is_null() ? "-" : v.dump();
}

}  // namespace gpuscale
