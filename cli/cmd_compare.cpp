// gpuscale compare A.json B.json [C.json ...]: each later file against the baseline A; exit 1 on a
// regression or an invalid/failed row (docs/analysis.md); inconclusive rows never fail. The text fits
// COLUMNS (default 80) unless --wide.
#include <cstdlib>

#include <fmt/format.h>

#include "analysis/compare.h"
#include "analysis/output.h"
#include "analysis/suite_reporter.h"
#include "text/text_width.h"
#include "core/error.h"
#include "cli/commands.h"
#include "cli/format_options.h"

namespace gpuscale {
namespace {

struct CompareFlags {
  std::vector<std::string> files;
  double threshold = 0.05;
  FormatPaths formats;  // suite_formats()' files
  bool force = false, only_changes = false, wide = false, lenient = false;
};

int run_compare(const CompareFlags& f) {
  if (f.files.size() < 2) throw Error("compare needs a baseline and at least one file to compare with it");
  if (!(f.threshold >= 0 && f.threshold < 1))
    throw Error(fmt::format("invalid --threshold {}: a fraction in [0, 1) (0.05 = 5%)", f.threshold));
  auto outputs = asked_outputs(suite_formats(), f.formats);
  check_outputs(outputs, f.force, f.files);
  std::vector<LoadedResult> runs;
  for (const auto& path : f.files)
    runs.push_back(f.lenient ? load_result_lenient(path, RowDetail::rows_only) : load_result(path, RowDetail::rows_only));
  const CompareView view{width_from_columns(std::getenv("COLUMNS")), f.wide, f.only_changes};
  bool failed = false;
  std::vector<JUnitSuite> suites;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    const auto c = compare_results(runs[0], runs[i], f.threshold);
    if (!any_to_stdout(outputs)) fmt::print("{}{}", i > 1 ? "\n" : "", format_comparison(c, view));
    failed |= c.failed();
    suites.push_back(comparison_suite(c));
  }
  for (auto& o : outputs) o.text = suite_format(o.flag).render("gpuscale compare", suites);
  std::fflush(stdout);
  write_outputs(outputs, f.force);
  return failed ? kExitInvalidResult : kExitOk;
}

}  // namespace

void add_compare_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("compare", "compare result files row by row (A is the baseline); exit 1 on a regression "
                                            "beyond the noise and the threshold");
  auto f = std::make_shared<CompareFlags>();
  cmd->add_option("files", f->files, "baseline A, then the files to compare with it")->required();
  cmd->add_option("--threshold", f->threshold, "smallest change that counts as a regression (default 0.05 = 5%)");
  add_format_options(*cmd, suite_formats(), f->formats, ", one test case per matched row");
  cmd->add_flag("--only-changes", f->only_changes,
                "show only rows with a regression, improvement or problem (inconclusive rows are not shown; the "
                "summary line counts every verdict)");
  cmd->add_flag("--wide", f->wide, "one line per row with every column (basis, % of peak, repetitions), however wide; "
                                   "without it the text fits COLUMNS (default 80)");
  cmd->add_flag("--force", f->force, "replace an output file that already exists");
  cmd->add_flag("--lenient", f->lenient,
                "read files that contradict themselves (gpuscale validate names how); every row they concern is "
                "marked UNTRUSTED in its note");
  cmd->callback([&action, f] { action = [f] { return run_compare(*f); }; });
}

}  // namespace gpuscale
