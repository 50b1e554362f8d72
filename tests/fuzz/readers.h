#pragma once
// Every reader of a file that travels between clusters and teams, from the file's text to all it
// produces. The fuzz targets (tests/fuzz/<target>.cpp) and the hostile-file unit tests
// (tests/unit/results/test_hostile_files.cpp) drive the same code through these. A reader may refuse a text
// only with gpuscale::Error (one line for the user); anything else is a bug.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/compare.h"
#include "analysis/suite_reporter.h"
#include "analysis/merge.h"
#include "analysis/reference.h"
#include "analysis/reporter.h"
#include "harness/run/resume.h"
#include "results/result_file.h"
#include "results/result_io.h"
#include "results/result_stream.h"

namespace gpuscale::readers {

// gpuscale validate, and every command's first step: the streamed parse (depth, duplicate keys), the
// schema of the header and of each row, the rows' conversion; then the whole-document reader (resume's)
// on the same text, which must agree.
inline nlohmann::json result_file(const std::string& text) {
  std::size_t rows = 0;
  auto read = stream_result_text(text, "f.json", [&](ResultRow&& row, std::size_t) {
    (void)row_key(row);
    ++rows;
  });
  const auto doc = parse_result_text(text, "f.json");
  if (doc.at("results").size() != rows) throw std::logic_error("the streamed and the whole-document readers disagree");
  return read.header;
}

// gpuscale report: the analysis loader and every output format (the terminal's and the table's).
inline void report(const std::string& text) {
  std::vector<FileReport> files;
  files.push_back(make_file_report(load_result_text("f.json", text), kDefaultStragglerThreshold));
  (void)terminal_reporter()->render(files, {});
  for (const Reporter* format : report_formats()) (void)format->render(files, {});
}

// gpuscale compare: the file against itself and against `other` (a valid result), both ways.
inline void compare(const std::string& text, const nlohmann::json& other) {
  const auto mine = load_result_text("f.json", text);
  const auto theirs = result_from_json("g.json", other);
  for (const auto& c : {compare_results(mine, mine, 0.05), compare_results(theirs, mine, 0.05),
                        compare_results(mine, theirs, 0.05)}) {
    (void)format_comparison(c);
    for (const SuiteReporter* format : suite_formats()) (void)format->render("compare", {comparison_suite(c)});
  }
}

// gpuscale check: the reference reader, and `run` (a valid result) checked against the reference.
inline void reference(const std::string& text, const nlohmann::json& run) {
  const auto ref = reference_from_json("ref.json", parse_json_text(text, "ref.json"));
  const auto checked = result_from_json("r.json", run);  // named: the outcome points into it
  const auto outcome = check_against(checked, ref);
  (void)format_check(outcome);
  for (const SuiteReporter* format : suite_formats()) (void)format->render("check", {check_suite(outcome)});
}

// gpuscale merge: the file with `other` (a valid result) and with itself; the merged document (its
// text made, and checked, as merge writes it).
inline nlohmann::json merge(const std::string& text, const nlohmann::json& other) {
  const auto run = load_result_text("f.json", text);
  const auto outcome = merge_results({{"f.json", run, ""}, {"g.json", result_from_json("g.json", other), ""}, {"again.json", run, ""}},
                                     {{"gpuscale", "merge"}, "0", "readers"});
  (void)merged_result_text(outcome);
  return merged_document(outcome);
}

// gpuscale run --resume: the recorded options, then the plan split against `launch`, by default the
// launch the file itself describes (so that the checks past the launch's run too).
inline ResumePlan resume(const std::string& text, const std::optional<LaunchShape>& launch = std::nullopt) {
  const auto doc = parse_result_text(text, "f.json");
  (void)plan_options_json(adopt_recorded_options(doc, RunOptions{}, "f.json"));
  LaunchShape own{doc.at("backend").get<std::string>(), {}, {}};
  for (const auto& r : doc.at("ranks")) {
    own.hosts.push_back(r.at("host").get<std::string>());
    own.devices.push_back(r.at("device").at("name").get<std::string>());
  }
  auto plan = plan_resume(doc, launch.value_or(own), "f.json");
  nlohmann::json rows = plan.kept_rows;
  order_rows_by_plan(rows, plan.plan.at("points"));
  return plan;
}

}  // namespace gpuscale::readers
