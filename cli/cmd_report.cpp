// gpuscale report FILE...: terminal tables, and on request HTML, Markdown, CSV and Prometheus text;
// --drain-list: only the hosts the fleet analysis names as suspects, one per line, for Slurm scripts.
#include <optional>
#include <set>

#include <fmt/format.h>

#include "analysis/fleet_check.h"
#include "analysis/output.h"
#include "analysis/report.h"
#include "text/text_table.h"
#include "core/error.h"
#include "cli/commands.h"
#include "history/history_report.h"
#include "results/result_io.h"

namespace gpuscale {
namespace {

struct ReportFlags {
  std::vector<std::string> files;
  std::string html, markdown, csv, openmetrics;
  double straggler = kDefaultStragglerThreshold;
  bool force = false, drain = false, wide = false, lenient = false;
  std::vector<std::string> health;  // --health-file: gpuscale health documents whose failing nodes join the drain list
  std::string history, history_since;  // --history URL (docs/history.md)
  double history_threshold = 0.1;
};

// Nothing but the host names on standard output: a script pipes it into scontrol.
int print_drain_list(const ReportFlags& f) {
  if (!f.html.empty() || !f.markdown.empty() || !f.csv.empty() || !f.openmetrics.empty())
    throw Error("--drain-list prints only the drain list: it cannot be combined with --html, --markdown, --csv or --openmetrics");
  std::vector<LoadedResult> runs;
  for (const auto& path : f.files) runs.push_back(load_result(path));
  std::vector<const LoadedResult*> list;
  for (const auto& r : runs) list.push_back(&r);
  std::set<std::string> hosts;
  if (!f.files.empty())
    for (const auto& host : drain_list(list)) hosts.insert(host);
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
  std::vector<OutputRequest> outputs;
  if (!f.html.empty()) outputs.push_back({"--html", f.html, ""});
  if (!f.markdown.empty()) outputs.push_back({"--markdown", f.markdown, ""});
  if (!f.csv.empty()) outputs.push_back({"--csv", f.csv, ""});
  if (!f.openmetrics.empty()) outputs.push_back({"--openmetrics", f.openmetrics, ""});
  for (const auto& o : outputs)
    if (o.flag == "--html" && o.path == "-") throw Error("--html needs a file name, not '-'");
  check_outputs(outputs, f.force, f.files);
  std::optional<history::HistoryReport> past;
  if (!f.history.empty()) {
    if (!(f.history_threshold >= 0 && f.history_threshold < 1))
      throw Error(fmt::format("invalid --history-threshold {}: a fraction in [0, 1)", f.history_threshold));
    history::RegressionRules rules;  // the defaults of `history regressions`
    rules.since = f.history_since;
    rules.threshold = f.history_threshold;
    past = history::history_report(*history::open_store(f.history, false), rules);
  }
  std::vector<FileReport> reports;
  for (const auto& path : f.files)
    reports.push_back(make_file_report(f.lenient ? load_result_lenient(path) : load_result(path), f.straggler));
  for (auto& o : outputs) {
    if (o.flag == "--html") {
      o.text = report_html(reports);
      if (past) o.text.insert(o.text.rfind("</body>"), past->html);  // the history after the files' sections
    }
    else if (o.flag == "--markdown") o.text = report_markdown(reports);
    else if (o.flag == "--csv") o.text = report_csv(reports);
    else o.text = report_openmetrics(reports);
  }
  const std::size_t width = f.wide ? 0 : terminal_columns();  // COLUMNS, 80 by default
  if (!any_to_stdout(outputs)) {
    for (std::size_t i = 0; i < reports.size(); ++i) fmt::print("{}{}", i ? "\n" : "", report_text(reports[i], width));
    if (past) fmt::print("{}{}", reports.empty() ? "" : "\n", past->text);
  }
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
  cmd->add_option("--html", f->html, "write a self-contained HTML page with charts");
  cmd->add_option("--markdown", f->markdown, "write Markdown ('-': standard output)");
  cmd->add_option("--csv", f->csv, "write CSV, one line per result row ('-': standard output)");
  cmd->add_option("--openmetrics", f->openmetrics,
                  "write Prometheus text format for node_exporter's textfile collector ('-': standard output)");
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
