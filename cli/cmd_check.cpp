// gpuscale check FILE --reference REF: every row against the reference values of its cluster; with
// --fail-on-outliers (with or without a reference) also every outlier the run's fleet analysis named;
// exit 1 on any failure (the reference file comes from gpuscale reference, cmd_reference.cpp). The text
// fits COLUMNS (default 80).
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "analysis/fleet_check.h"
#include "analysis/output.h"
#include "analysis/suite_reporter.h"
#include "analysis/reference.h"
#include "text/text_width.h"
#include "core/error.h"
#include "core/shown_text.h"
#include "core/term_text.h"
#include "core/units.h"
#include "cli/commands.h"
#include "cli/format_options.h"

namespace gpuscale {
namespace {

struct CheckFlags {
  std::string file, reference;
  FormatPaths formats;  // suite_formats()' files
  bool fail_on_outliers = false, force = false;
};

int run_check(const CheckFlags& f) {
  if (f.reference.empty() && !f.fail_on_outliers)
    throw Error("check needs --reference REF, --fail-on-outliers, or both");
  auto outputs = asked_outputs(suite_formats(), f.formats);
  std::vector<std::string> inputs{f.file};
  if (!f.reference.empty()) inputs.push_back(f.reference);
  check_outputs(outputs, f.force, inputs);
  const auto run = load_result(f.file, RowDetail::rows_only);  // rows are judged, not ranks
  // Everything is read and decided before anything is printed: a bad input is one line, exit 2.
  std::optional<Reference> ref;  // kept: the outcome points into it
  std::optional<CheckOutcome> outcome;
  if (!f.reference.empty()) {
    ref = load_reference(f.reference);
    outcome = check_against(run, *ref);
  }
  std::optional<OutlierCheck> outliers;
  if (f.fail_on_outliers) outliers = check_outliers(run, fleet_view(run));
  const std::size_t width = width_from_columns(std::getenv("COLUMNS"));
  std::string text;
  std::vector<JUnitSuite> suites;
  if (outcome) {
    text += format_check(*outcome, width);
    suites.push_back(check_suite(*outcome));
  }
  if (outliers) {
    text += (text.empty() ? "" : "\n") + format_outlier_check(*outliers, width);
    suites.push_back(outlier_suite(*outliers));
  }
  if (!any_to_stdout(outputs)) fmt::print("{}", text);
  for (auto& o : outputs) o.text = suite_format(o.flag).render("gpuscale check", suites);
  std::fflush(stdout);
  write_outputs(outputs, f.force);
  const bool failed = (outcome && outcome->failures()) || (outliers && !outliers->failures.empty());
  return failed ? kExitInvalidResult : kExitOk;
}

}  // namespace

void add_check_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("check", "check a result file against reference values and/or its fleet outliers (exit 1 on "
                                          "any failure)");
  auto f = std::make_shared<CheckFlags>();
  cmd->add_option("file", f->file, "result JSON file")->required();
  cmd->add_option("--reference", f->reference,
                  "reference file (gpuscale reference writes one); needed unless --fail-on-outliers is given");
  cmd->add_flag("--fail-on-outliers", f->fail_on_outliers,
                "fail (exit 1) when the run's fleet analysis named outliers (analysis.outliers), one line per outlier; "
                "works with or without --reference; a file without outlier analysis is refused (exit 2)");
  add_format_options(*cmd, suite_formats(), f->formats, ", one test case per checked row and per outlier");
  cmd->add_flag("--force", f->force, "replace an output file that already exists");
  cmd->callback([&action, f] { action = [f] { return run_check(*f); }; });
}

}  // namespace gpuscale
