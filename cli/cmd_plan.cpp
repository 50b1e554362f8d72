// gpuscale plan FILE... --preset NAME --tokens N: a what-if for one training workload from measured
// result files (analysis/capacity_plan.h, docs/capacity.md): step time and tokens/s at each GPU count,
// the max useful GPUs, the time to train, energy, checkpoint stalls and the first bottleneck. Terminal
// text, and on request Markdown, JSON and an HTML page.
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "analysis/burn_capacity.h"
#include "planning/capacity_plan.h"
#include "analysis/output.h"
#include "analysis/reporter.h"
#include "text/text_table.h"
#include "core/error.h"
#include "core/term_text.h"
#include "core/units.h"
#include "cli/commands.h"
#include "history/history_store.h"
#include "results/row_fields.h"

namespace gpuscale {
namespace {

struct PlanFlags {
  std::vector<std::string> files;
  std::string history, cluster;  // --history URL: the latest stored runs instead of (or beside) files
  std::string preset, tokens, ckpt_every, deadline, layout, markdown, json, html;
  std::optional<int> gpus;
  double efficiency = kUsefulEfficiency;
  bool force = false;
};

// A token count: a positive number with an optional decimal suffix K, M, B (or G) or T ("1T" = 1e12,
// "300B" = 3e11, "2.5e12"). Tokens are counted in thousands, not 1024s.
double parse_tokens(const std::string& text) {
  static const std::vector<std::pair<char, double>> suffixes = {{'K', 1e3}, {'M', 1e6}, {'B', 1e9}, {'G', 1e9}, {'T', 1e12}};
  std::string digits = text;
  double scale = 1;
  if (!digits.empty())
    for (const auto& [c, s] : suffixes)
      if (std::toupper(static_cast<unsigned char>(digits.back())) == c) {
        digits.pop_back();
        scale = s;
        break;
      }
  try {
    std::size_t used = 0;
    const double v = std::stod(digits, &used);
    if (used == digits.size() && std::isfinite(v * scale) && v * scale >= 1) return v * scale;
  } catch (const std::exception&) {
  }
  throw Error(fmt::format("invalid --tokens '{}': a positive count with an optional K, M, B or T (1T = 1e12 tokens)",
                          terminal_quote(text)));
}

// A stored row as the plan reads a file's: its value, status, parameters, spread and stored fields.
ResultRow stored_row(const history::RowPoint& p) {
  ResultRow r;
  r.benchmark = p.benchmark;
  r.scope = p.scope;
  r.unit = p.unit;
  r.gpu_count = p.gpu_count;
  r.params = nlohmann::json::parse(p.params, nullptr, false);
  if (r.params.is_discarded() || !r.params.is_object()) r.params = nlohmann::json::object();
  r.status = parse_row_status(p.status).value_or(RowStatus::failed);
  r.aggregate = p.value;
  for (const auto& [name, v] : p.fields) put_history_figure(r, name, v);
  r.spread = RowSpread{p.noise_down, p.noise_up, static_cast<std::size_t>(p.reps)};
  return r;
}

// From a history store: the train-step rows of the model from the latest stored run that has them, and
// the checkpoint.write rows from the latest that has those (docs/capacity.md, "From a history store").
std::vector<ResultRow> rows_from_history(const PlanFlags& f) {
  auto store = history::open_store(f.history, false);
  std::vector<ResultRow> out;
  for (const char* benchmark : {"train-step", "checkpoint.write"}) {
    const auto points = store->row_points({benchmark, "", f.cluster, "", "", ""});  // in run time order
    std::string latest;
    for (const auto& p : points) {
      const auto params = nlohmann::json::parse(p.params, nullptr, false);
      const bool wanted = std::string(benchmark) != "train-step" ||
                          (params.is_object() && params.value("name", std::string()) == f.preset);
      if (wanted) latest = p.run_id;
    }
    for (const auto& p : points)
      if (!latest.empty() && p.run_id == latest) out.push_back(stored_row(p));
  }
  return out;
}

int run_plan(const PlanFlags& f) {
  if (f.files.empty() && f.history.empty()) throw Error("plan: give result files, --history URL, or both");
  if (!f.cluster.empty() && f.history.empty()) throw Error("--cluster goes with --history");
  if (f.preset.empty()) throw Error("plan: give --preset NAME, the model of the train-step rows to plan (llama3-8b, ...)");
  if (f.tokens.empty()) throw Error("plan: give --tokens N, the tokens to train (1T, 300B, ...)");
  if (!(f.efficiency > 0 && f.efficiency < 1))
    throw Error(fmt::format("invalid --efficiency {}: a fraction between 0 and 1 (0.8 = 80%)", f.efficiency));
  PlanWorkload w;
  w.model = f.preset;
  w.tokens = parse_tokens(f.tokens);
  if (!f.ckpt_every.empty()) w.ckpt_every_s = parse_time_span(f.ckpt_every, "--ckpt-every");
  if (!f.deadline.empty()) w.deadline_s = parse_time_span(f.deadline, "--deadline");
  if (f.gpus && *f.gpus < 1) throw Error(fmt::format("invalid --gpus {}: a positive count", *f.gpus));
  w.gpus = f.gpus;
  w.layout = f.layout;
  w.efficiency_bar = f.efficiency;

  std::vector<OutputRequest> outputs;
  if (!f.markdown.empty()) outputs.push_back({"--markdown", f.markdown, ""});
  if (!f.json.empty()) outputs.push_back({"--json", f.json, ""});
  if (!f.html.empty()) {
    if (f.html == "-") throw Error("--html needs a file name, not '-'");
    outputs.push_back({"--html", f.html, ""});
  }
  check_outputs(outputs, f.force, f.files);
  // Everything is read and decided before anything is printed: a refusal is one line, exit 2.
  std::vector<LoadedResult> runs;
  std::vector<ResultRow> rows;
  nlohmann::json capacity = nlohmann::json::array();
  for (const auto& path : f.files) {
    runs.push_back(load_result(path));
    const auto& run = runs.back();
    for (auto& c : burn_capacity(run.rows, run.doc.value("ranks", nlohmann::json::array()))) capacity.push_back(std::move(c));
    rows.insert(rows.end(), run.rows.begin(), run.rows.end());
  }
  if (!f.history.empty())
    for (auto& r : rows_from_history(f)) rows.push_back(std::move(r));
  const auto plan = make_capacity_plan(w, rows, capacity);
  rows.clear();
  for (auto& o : outputs) {
    if (o.flag == "--markdown") o.text = plan_markdown(plan);
    else if (o.flag == "--json") o.text = plan_json(plan).dump(1) + "\n";
  }
  for (auto& o : outputs)
    if (o.flag == "--html") {  // the report of the inputs with the plan as its first section
      std::vector<FileReport> reports;
      for (auto& run : runs) reports.push_back(make_file_report(std::move(run), kDefaultStragglerThreshold));
      ReportExtras extras;
      extras.opening.html = plan_html(plan);
      o.text = report_format("--html").render(reports, extras);
    }
  if (!any_to_stdout(outputs)) fmt::print("{}", plan_text(plan, terminal_columns()));
  std::fflush(stdout);
  write_outputs(outputs, f.force);
  return kExitOk;
}

}  // namespace

void add_plan_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("plan", "capacity plan for a training workload from measured result files: tokens/s per "
                                         "GPU count, max useful GPUs, time to train, energy, checkpoint stalls, bottleneck");
  auto f = std::make_shared<PlanFlags>();
  cmd->add_option("files", f->files, "result JSON files: train-step rows of the model, and storage or burn-in rows");
  cmd->add_option("--history", f->history, "also the latest stored runs of this results history (docs/history.md): its "
                                           "train-step and checkpoint.write rows");
  cmd->add_option("--cluster", f->cluster, "--history: only this cluster's runs");
  cmd->add_option("--preset", f->preset, "the model whose train-step rows to plan (a preset key, or 'file')");
  cmd->add_option("--tokens", f->tokens, "tokens to train: 1T, 300B, 15e12");
  cmd->add_option("--ckpt-every", f->ckpt_every, "checkpoint interval (30m, 2h): the stalls from the checkpoint.write rows");
  cmd->add_option("--gpus", f->gpus, "GPUs available: the planned counts stop there");
  cmd->add_option("--deadline", f->deadline, "the time to train must fit (14d): the fewest GPUs that meet it");
  cmd->add_option("--layout", f->layout, "plan only this layout of the rows (dp, tp=2, ...)");
  cmd->add_option("--efficiency", f->efficiency, "the efficiency bar of the max useful GPUs (default 0.8)");
  cmd->add_option("--markdown", f->markdown, "write Markdown ('-': standard output)");
  cmd->add_option("--json", f->json, "write JSON ('-': standard output)");
  cmd->add_option("--html", f->html, "write the inputs' HTML report with the plan as its first section");
  cmd->add_flag("--force", f->force, "replace output files that already exist");
  cmd->callback([f, &action] { action = [f] { return run_plan(*f); }; });
}

}  // namespace gpuscale
