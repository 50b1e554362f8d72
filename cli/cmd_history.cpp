// gpuscale history add|list|trend|regressions|members|export|prune: result files kept in a database (docs/history.md).
// The store is --store URL or GPUSCALE_STORE: sqlite:///path/history.db or postgresql://user@host/db.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "text/escape.h"
#include "cli/commands.h"
#include "core/error.h"
#include "core/term_text.h"
#include "history/history_store.h"
#include "history/history_text.h"
#include "history/member_text.h"
#include "history/store_url.h"

namespace gpuscale {
namespace {

using namespace history;

struct HistoryFlags {
  std::string store, cluster, since, before, benchmark, params, node, gpu, format = "json", output;
  std::vector<std::string> files;
  int gpus = 0;
  std::size_t baseline_runs = 5;  // trend's baseline column
  std::size_t step_baseline_runs = RegressionRules{}.baseline_runs, lookback_runs = RegressionRules{}.lookback_runs;
  double threshold = 0.1;
  double member_threshold = 0;  // members: the noise alone decides (docs/history.md, "Each member against its own past")
  std::vector<std::string> kinds{"gpu", "node", "link", "nic"};
  std::size_t within_runs = 3;
  bool json = false, dry_run = false;
};

std::string store_url(const HistoryFlags& f) {
  if (!f.store.empty()) return f.store;
  if (const char* env = std::getenv("GPUSCALE_STORE"); env && *env) return env;
  throw Error("no store: give --store URL or set GPUSCALE_STORE (e.g. sqlite:///var/lib/gpuscale/history.db)");
}

// --since, --before: a date or a UTC time as result files write them; compared as text with created_utc.
void check_date(const char* flag, const std::string& value) {
  static const std::regex date(R"(\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?Z?)?)");
  if (!value.empty() && !std::regex_match(value, date))
    throw Error(fmt::format("invalid {} '{}': use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (UTC)", flag, value));
}
void check_since(const std::string& since) { check_date("--since", since); }

void write_out(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    fmt::print("{}", text);
    return;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!(out << text) || !out.flush()) throw Error(fmt::format("cannot write {}", path));
}

int add_files(const HistoryFlags& f) {
  const std::string url = store_url(f);
  parse_store_url(url);  // a malformed URL is refused before the files are read
  // Every file verified before any is stored: a bad one stores nothing.
  std::vector<RunRecord> records;
  for (const auto& path : f.files) records.push_back(read_run_record(path));
  auto store = open_store(url, true);
  for (const auto& r : records) {
    const bool added = store->add_run(r);
    fmt::print("{}: {} run {} ({} rows, cluster {})\n", term_text(r.source), added ? "stored as" : "already stored as",
               r.id.substr(0, 12), r.rows.size(), term_text(r.cluster));
  }
  return kExitOk;
}

int list_runs(const HistoryFlags& f) {
  check_since(f.since);
  auto store = open_store(store_url(f), false);
  const auto runs = store->list_runs({f.cluster, f.since});
  if (runs.empty()) throw Error(fmt::format("no stored run matches (cluster '{}', since '{}')", f.cluster, f.since));
  fmt::print("{}", runs_text(runs));
  return kExitOk;
}

// The series a trend or a regression query names: rows, or one host's / GPU's values in them.
// hosts_from: with hosts_too, every host's series from the runs at or after it (regression_horizon).
std::vector<Series> query_series(HistoryStore& store, const HistoryFlags& f, bool hosts_too,
                                 const std::string& hosts_from = "") {
  RowQuery q{f.benchmark, "", f.cluster, f.node, f.gpu, ""};
  std::vector<Series> all;
  if (f.node.empty() && f.gpu.empty()) all = row_series(store.row_points(q));
  if (hosts_too || !f.node.empty() || !f.gpu.empty()) {
    if (hosts_too) q.since = hosts_from;
    auto ranks = rank_series(store.rank_points(q), !f.gpu.empty());
    all.insert(all.end(), std::make_move_iterator(ranks.begin()), std::make_move_iterator(ranks.end()));
  }
  std::vector<Series> out;
  for (auto& s : all)
    if (params_match(s.key.params, f.params) && (f.gpus == 0 || s.key.gpu_count == f.gpus)) out.push_back(std::move(s));
  return out;
}

int trend(const HistoryFlags& f) {
  if (!f.node.empty() && !f.gpu.empty()) throw Error("--node and --gpu name one series each: give one of them");
  if (f.baseline_runs == 0) throw Error("invalid --baseline-runs 0: at least 1");
  auto store = open_store(store_url(f), false);
  const auto series = query_series(*store, f, false);
  if (series.empty())
    throw Error(fmt::format("no stored series matches --benchmark {}{}{}{}", f.benchmark,
                            f.params.empty() ? "" : " --params " + f.params, f.node.empty() ? "" : " --node " + f.node,
                            f.gpu.empty() ? "" : " --gpu " + f.gpu));
  if (f.json) fmt::print("{}\n", trend_json(series, f.baseline_runs).dump(2));
  else fmt::print("{}", trend_text(series, f.baseline_runs));
  return kExitOk;
}

int regressions(const HistoryFlags& f) {
  check_since(f.since);
  if (!(f.threshold >= 0 && f.threshold < 1)) throw Error(fmt::format("invalid --threshold {}: a fraction in [0, 1)", f.threshold));
  if (f.step_baseline_runs == 0) throw Error("invalid --baseline-runs 0: at least 1");
  // A step needs 2 runs before it and the window's first after it.
  if (f.lookback_runs < 2) throw Error(fmt::format("invalid --lookback-runs {}: at least 2", f.lookback_runs));
  auto store = open_store(store_url(f), false);
  const RegressionRules rules{f.since, f.step_baseline_runs, f.threshold, f.lookback_runs};
  const auto series = query_series(*store, f, true, regression_horizon(store->list_runs({f.cluster, ""}), rules));
  if (series.empty()) throw Error(fmt::format("no stored series matches (cluster '{}', benchmark '{}')", f.cluster, f.benchmark));
  const auto regs = find_regressions(series, rules);
  if (f.json) fmt::print("{}\n", regressions_json(regs).dump(2));
  else fmt::print("{}", regressions_text(regs, series.size()));
  return regs.empty() ? kExitOk : kExitInvalidResult;  // 1: something got worse (as compare's regressions)
}

// Each GPU, node, link and NIC against its own past (history/self_baseline.h): the members whose newest runs
// stepped down beyond their own series' noise, and the power of the rule from that noise.
int members(const HistoryFlags& f) {
  check_since(f.since);
  if (!(f.member_threshold >= 0 && f.member_threshold < 1))
    throw Error(fmt::format("invalid --threshold {}: a fraction in [0, 1)", f.member_threshold));
  if (f.step_baseline_runs == 0) throw Error("invalid --baseline-runs 0: at least 1");
  if (f.lookback_runs < 2) throw Error(fmt::format("invalid --lookback-runs {}: at least 2", f.lookback_runs));
  if (f.within_runs == 0) throw Error("invalid --within-runs 0: at least 1");
  std::vector<MemberKind> kinds;
  for (const auto& k : f.kinds) {
    const auto kind = member_kind_named(k);
    if (!kind) throw Error(fmt::format("invalid --kind '{}': gpu, node, link or nic", k));
    if (std::find(kinds.begin(), kinds.end(), *kind) == kinds.end()) kinds.push_back(*kind);
  }
  auto store = open_store(store_url(f), false);
  const RegressionRules rules{f.since, f.step_baseline_runs, f.member_threshold, f.lookback_runs};
  const std::string horizon = regression_horizon(store->list_runs({f.cluster, ""}), rules);
  std::vector<MemberSeries> all;
  const RowQuery q{f.benchmark, "", f.cluster, "", "", horizon};
  for (auto& m : member_series(store->rank_points(q), store->member_points(q), kinds))
    if (params_match(m.series.key.params, f.params) && (f.gpus == 0 || m.series.key.gpu_count == f.gpus)) all.push_back(std::move(m));
  if (all.empty())
    throw Error(fmt::format("no stored member series matches (cluster '{}', benchmark '{}'): members come from rows whose "
                            "ranks measure themselves (STREAM, GEMM, copies) and the fleet rows' pair matrices",
                            f.cluster, f.benchmark));
  std::vector<Series> series;
  for (const auto& m : all) series.push_back(m.series);
  const auto verdicts = judge_own_past(series, rules, f.within_runs);
  if (f.json) fmt::print("{}\n", members_json(all, verdicts).dump(2));
  else fmt::print("{}", members_text(all, verdicts));
  const bool named = std::any_of(verdicts.begin(), verdicts.end(), [](const SelfVerdict& v) { return v.regression.has_value(); });
  return named ? kExitInvalidResult : kExitOk;  // 1: a member got slower (as regressions)
}

int export_store(const HistoryFlags& f) {
  check_since(f.since);
  if (f.format != "json" && f.format != "csv") throw Error(fmt::format("invalid --format '{}': json or csv", f.format));
  auto store = open_store(store_url(f), false);
  const auto runs = store->list_runs({f.cluster, f.since});
  if (runs.empty()) throw Error(fmt::format("no stored run matches (cluster '{}', since '{}')", f.cluster, f.since));
  const auto rows = store->row_points({"", "", f.cluster, "", "", f.since});
  write_out(f.output, f.format == "json" ? export_json(runs, rows).dump(2) + "\n" : export_csv(rows));
  return kExitOk;
}

// Retention (docs/history.md, "Size and retention"): exit 0 when nothing is that old, so a nightly
// `prune --before $(date -d '-1 year' +%F)` does not fail.
int prune(const HistoryFlags& f) {
  if (f.before.empty()) throw Error("history prune needs --before DATE: the runs created before it are deleted");
  check_date("--before", f.before);
  auto store = open_store(store_url(f), false);
  std::vector<RunSummary> old;
  std::size_t kept = 0;
  for (auto& r : store->list_runs({f.cluster, ""})) {
    if (r.created_utc < f.before) old.push_back(std::move(r));
    else ++kept;
  }
  const std::string which = f.cluster.empty() ? "" : fmt::format(" of cluster {}", term_text(f.cluster));
  if (f.dry_run) {
    fmt::print("would delete {} run{}{} created before {} ({} kept){}\n", old.size(), old.size() == 1 ? "" : "s", which,
               f.before, kept, old.empty() ? "" : ":");
    if (!old.empty()) fmt::print("{}", runs_text(old));
    return kExitOk;
  }
  const std::size_t gone = store->delete_runs({f.cluster, f.before});
  fmt::print("deleted {} run{}{} created before {} with their rows and rank values ({} kept)\n", gone,
             gone == 1 ? "" : "s", which, f.before, kept);
  return kExitOk;
}

CLI::App* sub(CLI::App* history, const char* name, const char* help, Action& action,
              const std::shared_ptr<HistoryFlags>& flags, int (*fn)(const HistoryFlags&)) {
  auto* cmd = history->add_subcommand(name, help);
  cmd->add_option("--store", flags->store, "store URL (default: $GPUSCALE_STORE): sqlite:///PATH or postgresql://...");
  cmd->callback([&action, flags, fn] { action = [flags, fn] { return fn(*flags); }; });
  return cmd;
}

}  // namespace

void add_history_command(CLI::App& app, Action& action) {
  auto flags = std::make_shared<HistoryFlags>();
  auto* h = app.add_subcommand("history", "keep result files in a database; trends and regressions over time");
  h->require_subcommand(1);
  auto* add = sub(h, "add", "verify result files and store them (a file already stored changes nothing)", action, flags, add_files);
  add->add_option("files", flags->files, "result JSON files")->required();
  auto* list = sub(h, "list", "list the stored runs", action, flags, list_runs);
  auto* tr = sub(h, "trend", "a row's values over time, with the noise band", action, flags, trend);
  auto* reg = sub(h, "regressions", "rows and hosts whose level stepped down and is still worse than before the step",
                  action, flags, regressions);
  auto* mem = sub(h, "members", "each GPU, node, link and NIC against its own past: those whose newest runs stepped down beyond "
                  "their own run-to-run noise, and the smallest step the rule names", action, flags, members);
  auto* ex = sub(h, "export", "write the stored runs and rows as JSON or CSV", action, flags, export_store);
  auto* pr = sub(h, "prune", "delete the runs created before a date (retention)", action, flags, prune);
  pr->add_option("--before", flags->before, "delete the runs created before DATE (UTC)")->required();
  pr->add_option("--cluster", flags->cluster, "only this cluster's runs");
  pr->add_flag("--dry-run", flags->dry_run, "list the runs that would be deleted; delete nothing");
  for (auto* c : {list, tr, reg, ex}) c->add_option("--cluster", flags->cluster, "only this cluster's runs");
  for (auto* c : {list, ex}) c->add_option("--since", flags->since, "runs created at or after DATE (UTC)");
  reg->add_option("--since", flags->since,
                  "the regressions that hold at a run created at or after DATE (UTC), whenever their step (default: "
                  "the latest run)");
  tr->add_option("--benchmark,-b", flags->benchmark, "benchmark key (stream.triad, all_reduce, ...)")->required();
  reg->add_option("--benchmark,-b", flags->benchmark, "only this benchmark");
  for (auto* c : {tr, reg}) {
    c->add_option("--params", flags->params, "parameters that must match: KEY=VALUE[,KEY=VALUE...]");
    c->add_option("--gpus", flags->gpus, "only this GPU count");
    c->add_flag("--json", flags->json, "JSON instead of text");
  }
  tr->add_option("--baseline-runs", flags->baseline_runs, "the baseline column: the median of the K runs before each run (default 5)");
  reg->add_option("--baseline-runs", flags->step_baseline_runs,
                  fmt::format("a step's baseline: the median of at most the last K runs before it, all of one level "
                              "(default {})", RegressionRules{}.baseline_runs));
  tr->add_option("--node,--host", flags->node, "one host's values (the median of its ranks)");
  tr->add_option("--gpu", flags->gpu, "one GPU's values, by its UUID");
  reg->add_option("--threshold", flags->threshold, "worse by more than this fraction beyond the noise (default 0.1)");
  reg->add_option("--lookback-runs", flags->lookback_runs,
                  fmt::format("steps are sought in the N runs before the window (default {}); a regression is named "
                              "until its step is that old", RegressionRules{}.lookback_runs));
  mem->add_option("--cluster", flags->cluster, "only this cluster's runs");
  mem->add_option("--since", flags->since, "the members slower at a run created at or after DATE (UTC) (default: the latest run)");
  mem->add_option("--benchmark,-b", flags->benchmark, "only this benchmark");
  mem->add_option("--params", flags->params, "parameters that must match: KEY=VALUE[,KEY=VALUE...]");
  mem->add_option("--gpus", flags->gpus, "only this GPU count");
  mem->add_option("--kind", flags->kinds, "the members judged: gpu, node, link, nic (default all)")->delimiter(',');
  mem->add_option("--threshold", flags->member_threshold, "slower by more than this fraction beyond the noise (default 0: the noise alone)");
  mem->add_option("--baseline-runs", flags->step_baseline_runs,
                  fmt::format("a step's baseline: at most the last K runs before it (default {})", RegressionRules{}.baseline_runs));
  mem->add_option("--lookback-runs", flags->lookback_runs,
                  fmt::format("steps are sought in the N runs before the window (default {})", RegressionRules{}.lookback_runs));
  mem->add_option("--within-runs", flags->within_runs, "the power: the step named within this many runs of its start, 95% (default 3)");
  mem->add_flag("--json", flags->json, "JSON instead of text");
  ex->add_option("--format", flags->format, "json (default) or csv");
  ex->add_option("-o,--output", flags->output, "file to write (default: stdout)");
}

}  // namespace gpuscale
