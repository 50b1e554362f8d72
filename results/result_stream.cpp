#include "results/result_stream.h"

#include <fmt/format.h>

#include "core/error.h"
#include "results/result_io.h"
#include "results/result_schema.h"
#include "results/result_upgrade.h"

namespace gpuscale {
namespace {

using nlohmann::json;

// Runs `parse` (which parses the input with the hook it is given) and checks what it read.
template <typename Parse>
StreamedResult stream(const std::string& name, Parse&& parse, const ResultRowSink& sink, Contradictions contradictions) {
  std::string row_problem, sink_problem;  // the first row refused, the first refusal of the sink
  ResultRowUpgrader rows;                 // either version's rows in, version 2's out
  ResultChecker checker;                  // what the rows say, against each other and the header
  StreamedResult out;
  auto hook = [&](json& element, std::size_t i) {
    if (!row_problem.empty() || !sink_problem.empty()) return;
    ResultRow row;
    if (row_problem = rows.read(element, i, row); !row_problem.empty()) return;
    checker.row(element, row, i);
    try {
      sink(std::move(row), i);
      ++out.rows;
    } catch (const Error& e) {
      sink_problem = e.what();
    }
  };
  out.header = parse(hook);
  out.version = result_schema_version(out.header, name);
  if (auto p = validate_result_json(out.header); !p.empty())
    throw Error(fmt::format("{}: does not match the result schema: {}", name, p));
  if (!row_problem.empty()) throw Error(fmt::format("{}: {}", name, row_problem));
  if (auto p = rows.check_file_version(out.version); !p.empty()) throw Error(fmt::format("{}: {}", name, p));
  if (!sink_problem.empty()) throw Error(sink_problem);
  out.header = upgrade_result_header(std::move(out.header));
  out.semantics = checker.finish(out.header);
  if (contradictions == Contradictions::refuse && !out.semantics.empty()) throw Error(refusal_line(out.semantics, name));
  return out;
}

}  // namespace

StreamedResult stream_result_file(const std::filesystem::path& path, const ResultRowSink& sink,
                                  Contradictions contradictions) {
  const std::string name = path.string();
  auto in = open_input_file(path, kMaxStreamedResultBytes);
  return stream(name, [&](const ResultsElementHook& hook) { return parse_json_stream(in, name, hook); }, sink,
                contradictions);
}

StreamedResult stream_result_text(const std::string& text, const std::string& name, const ResultRowSink& sink,
                                  Contradictions contradictions) {
  if (text.size() > kMaxStreamedResultBytes)
    throw Error(fmt::format("{}: {} bytes is larger than any file gpuscale writes (limit {})", name, text.size(),
                            kMaxStreamedResultBytes));
  return stream(name, [&](const ResultsElementHook& hook) { return parse_json_text(text, name, hook); }, sink,
                contradictions);
}

nlohmann::json read_result_document(const std::filesystem::path& path) {
  nlohmann::json rows = nlohmann::json::array();
  auto read = stream_result_file(path, [&](ResultRow&& row, std::size_t) { rows.push_back(row); });
  read.header["results"] = std::move(rows);
  return std::move(read.header);
}

}  // namespace gpuscale
