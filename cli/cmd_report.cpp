// gpuscale report FILE...: terminal tables, and on request every format of analysis/reporter.h's table
// (HTML, Markdown, CSV, Prometheus text...); --drain-list: only the hosts the fleet analysis names as
// suspects, one per line, for Slurm scripts.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "analysis/fleet_check.h"
#include "analysis/output.h"
#include "analysis/reporter.h"
#include "text/text_table.h"
#include "core/error.h"
#include "cli/commands.h"
#include "cli/format_options.h"
#include "history/history_report.h"
#include "results/result_io.h"

namespace gpuscale {
namespace {

struct ReportFlags {
  std::vector<std::string> files;
  FormatPaths formats;  // report_formats()' files
  double straggler = kDefaultStragglerThreshold;
  bool force = false, drain = false, wide = false, lenient = false;
  std::vector<std::string> health;  // --health-file: gpuscale health documents whose failing nodes join the drain list
  std::string history, history_since;  // --history URL (docs/history.md)
  double history_threshold = 0.1;
};

// Nothing but the host names on standard output: a script pipes it into scontrol.
int print_drain_list(const ReportFlags& f) {
  if (std::ranges::any_of(f.formats, [](const std::string& path) { return !path.empty(); }))
    throw Error("--drain-list prints only the drain list: it cannot be combined with " + flag_list(report_formats()));
  std::vector<LoadedResult> runs;
  for (const auto& path : f.files) runs.push_back(load_result(path));
  std::vector<const LoadedResult*> list;
  for (const auto& r : runs) list.push_back(&r);
  std::set<std::string> hosts;
  if (!f.files.empty())
    for (const auto& host : drain_list(list)) hosts.insert(host);
  // The header says what a clean list would have caught, on standard error: standard output is piped
  // into scontrol and carries the host names alone.
  for (const auto& r : runs)
    if (const auto header = drain_list_header(r); !header.empty()) fmt::print(stderr, "drain list from {}\n", header);
  for (const auto& path : f.health)
    for (const auto& host : health_drain_list(read_json_file(path, kMaxResultBytes), path)) hosts.insert(host);
  std::string out;
  for (const auto& host : hosts) out += host + "\n";
  fmt::print("{}", out);
  std::fflush(stdout);
  return kExitOk;
}

int run_report(const ReportFlags& f) {
  if (!f.health.empty() && !f.drain) throw Error("--health-file goes with --drain-list only");
  if (f.files.empty() && (f.history.empty() || f.drain) && !(f.drain && !f.health.empty()))
    throw Error("report: give result files (or --history URL)");
  if (f.drain) return print_drain_list(f);
  if (!(f.straggler > 0 && f.straggler < 1))
    throw Error(fmt::format("invalid --straggler {}: a fraction between 0 and 1 (0.10 = 10% below the median)", f.straggler));
  auto outputs = asked_outputs(report_formats(), f.formats);
  check_outputs(outputs, f.force, f.files);
  ReportExtras extras;
  if (!f.history.empty()) {
    if (!(f.history_threshold >= 0 && f.history_threshold < 1))
      throw Error(fmt::format("invalid --history-threshold {}: a fraction in [0, 1)", f.history_threshold));
    history::RegressionRules rules;  // the defaults of `history regressions`
    rules.since = f.history_since;
    rules.threshold = f.history_threshold;
    auto past = history::history_report(*history::open_store(f.history, false), rules);
    extras.closing.text = std::move(past.text);  // after the files' sections
    extras.closing.html = std::move(past.html);
  }
  std::vector<FileReport> reports;
  for (const auto& path : f.files)
    reports.push_back(make_file_report(f.lenient ? load_result_lenient(path) : load_result(path), f.straggler));
  for (auto& o : outputs) o.text = report_format(o.flag).render(reports, extras);
  const std::size_t width = f.wide ? 0 : terminal_columns();  // COLUMNS, 80 by default
  if (!any_to_stdout(outputs)) fmt::print("{}", terminal_reporter(width)->render(reports, extras));
  std::fflush(stdout);
  write_outputs(outputs, f.force);
  return kExitOk;
}

}  // namespace

void add_report_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("report", "tables, stragglers and a projection from result files; HTML, Markdown, CSV "
                                           "and Prometheus exports");
  auto f = std::make_shared<ReportFlags>();
  cmd->add_option("files", f->files, "result JSON files (none with --history: the history alone)");
  cmd->add_option("--history", f->history, "add the trends and what changed from this results history (docs/history.md)");
  cmd->add_option("--history-since", f->history_since, "--history: regressions since DATE (default: the latest run)");
  cmd->add_option("--history-threshold", f->history_threshold, "--history: worse beyond the noise by more than this (0.1)");
  add_format_options(*cmd, report_formats(), f->formats);
  cmd->add_option("--straggler", f->straggler, "name ranks more than this fraction below the median (default 0.10)");
  cmd->add_flag("--drain-list", f->drain,
                "print only the hosts the fleet analysis names as suspects (analysis.outlier_hosts), one per line, nothing "
                "else (empty: none); a file without outlier analysis, or a name that is not a host name, is refused (exit 2)");
  cmd->add_option("--health-file", f->health,
                  "--drain-list: also the nodes this `gpuscale health -o` document fails (repeatable; slurm/acceptance.sbatch)")
      ->allow_extra_args(false);  // one file each: the result files stay positional
  cmd->add_flag("--force", f->force, "replace output files that already exist");
  cmd->add_flag("--lenient", f->lenient,
                "read a file that contradicts itself (gpuscale validate names how); every figure it concerns is "
                "marked UNTRUSTED");
  cmd->add_flag("--wide", f->wide,
                "terminal text without a width limit (by default every line fits COLUMNS, 80 when unset, apart from "
                "the nccl-tests tables)");
  cmd->callback([&action, f] { action = [f] { return run_report(*f); }; });
}

}  // namespace gpuscale
