// gpuscale plan's formats: one table of cells per series, shared by the terminal, Markdown and HTML,
// and the JSON of the same figures (docs/capacity.md, "The plan's output").
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "planning/capacity_plan.h"
#include "text/escape.h"
#include "text/number_text.h"
#include "text/text_table.h"
#include "core/units.h"

namespace gpuscale {
namespace {

std::string bytes_text(double b) { return b >= 1e9 ? figure_text(b / 1e9) + " GB" : figure_text(b / 1e6) + " MB"; }
std::string energy_text(double j) { return j >= 3.6e9 ? figure_text(j / 3.6e9) + " MWh" : figure_text(j / 3.6e6) + " kWh"; }

// The max useful GPUs among the planned counts; a measured fall, or a measured count within the noise,
// is the scaling rule's own line (analysis/train_scaling.h).
std::string max_useful_line(const PlanSeries& s, double bar) {
  const auto& f = s.scaling;
  if (f.max_useful_measured || f.max_useful_text.find("undecided") != std::string::npos) return f.max_useful_text;
  if (s.counts.empty()) return "max useful GPUs: none planned";
  if (!s.max_useful) return fmt::format("max useful GPUs: none: no planned count holds {:.0f}%", bar * 100);
  const PlanCount* after = nullptr;
  for (const auto& c : s.counts)
    if (c.gpus > *s.max_useful && !after) after = &c;
  if (after)
    return fmt::format("max useful GPUs {}{}: efficiency {:.1f}% at {} GPUs is under {:.0f}%", *s.max_useful,
                       after->measured ? "" : " (PROJECTED)", after->efficiency * 100, after->gpus, bar * 100);
  return fmt::format("max useful GPUs: at least {}, the largest planned count ({:.1f}%, {}); not planned beyond it",
                     *s.max_useful, s.counts.back().efficiency * 100, s.counts.back().measured ? "measured" : "PROJECTED");
}

const std::vector<std::string>& headers() {
  static const std::vector<std::string> h = {"GPUs", "nodes", "source", "tokens/s", "step", "eff", "time to train",
                                             "power", "energy", "ckpt stall", "bottleneck"};
  return h;
}

std::vector<std::string> cells(const PlanCount& c) {
  return {std::to_string(c.gpus),
          std::to_string(c.nodes),
          c.measured ? "measured" : "PROJECTED",
          figure_text(c.tokens_per_s),
          figure_text(c.step_s) + " s",
          fmt::format("{:.1f}%", c.efficiency * 100),
          human_duration(c.train_s),
          c.power_w ? figure_text(*c.power_w / 1e3) + " kW" : "-",
          c.energy_j ? energy_text(*c.energy_j) : "-",
          c.ckpt_stall_s ? fmt::format("{} ({:.2g}%)", human_duration(*c.ckpt_stall_s), *c.ckpt_stall_fraction * 100) : "-",
          c.bottleneck};
}

std::string model_line(const CapacityPlan& p) {
  const auto& m = p.model;
  std::string out = fmt::format("{}: {} layers, hidden {}, seq {}, {}, {} B weights", term_text(m.value("name", "?")),
                                m.value("layers", 0), m.value("hidden", 0), m.value("seq", 0), term_text(m.value("dtype", "?")),
                                figure_text(p.total_params / 1e9));
  if (p.shrunk) out += "; SHRUNK by --quick or --layers (shrunk_from): every figure is the shrunk model's, not the preset's";
  return out;
}

std::string workload_line(const PlanWorkload& w) {
  std::string out = fmt::format("{} tokens", plan_tokens_text(w.tokens));
  if (w.ckpt_every_s) out += ", a checkpoint every " + format_time_span(*w.ckpt_every_s);
  if (w.gpus) out += fmt::format(", {} GPUs available", *w.gpus);
  if (w.deadline_s) out += ", deadline " + format_time_span(*w.deadline_s);
  return out + fmt::format(", efficiency bar {:.0f}%", w.efficiency_bar * 100);
}

std::string checkpoint_line(const CapacityPlan& p) {
  std::string out = fmt::format("{} B weights x {} B = {} per checkpoint", figure_text(p.total_params / 1e9),
                                figure_text(p.ckpt_bytes_per_param), bytes_text(p.ckpt_bytes));
  if (p.ckpt_needed_gb_s)
    out += fmt::format("; under {:.0f}% of the interval needs {} GB/s of write", kCheckpointStallBudget * 100,
                       figure_text(*p.ckpt_needed_gb_s));
  if (!p.ckpt_note.empty()) out += "; " + p.ckpt_note;
  return out;
}

std::string fit_line(const TrainScaling& s) {
  if (!s.fitted) return "scaling model: " + s.why;
  return fmt::format("scaling model: GPU-us per token = {} + {} x log2(n/{}), fit error {:.1f}% RMS over {} measured counts",
                     figure_text(s.a), figure_text(s.b), s.base_count, s.rms_rel_error * 100, s.points.size());
}

std::string answer_line(const PlanSeries& s) {
  if (!s.chosen) return "answer: none: no planned count holds the efficiency bar";
  for (const auto& c : s.counts)
    if (c.gpus == *s.chosen)
      return fmt::format("answer: {} GPUs ({}): {} to train{}{}", c.gpus, s.chosen_why, human_duration(c.train_s),
                         c.energy_j ? fmt::format(", {} at {} kW", energy_text(*c.energy_j), figure_text(*c.power_w / 1e3)) : "",
                         c.measured ? " (measured count)" : " (PROJECTED count)");
  return {};
}

// The checkpoint.write rows the stalls came from, once each (every series uses the same).
std::vector<std::string> ckpt_sources(const CapacityPlan& p) {
  std::vector<std::string> out;
  for (const auto& s : p.series)
    for (const auto& c : s.counts)
      if (!c.ckpt_source.empty() && std::find(out.begin(), out.end(), c.ckpt_source) == out.end()) out.push_back(c.ckpt_source);
  return out;
}

std::string series_title(const PlanSeries& s) {
  return fmt::format("layout {} ({} scaling)", s.scaling.layout, s.scaling.scaling);
}

}  // namespace

std::string plan_tokens_text(double t) {
  return t >= 1e12 ? figure_text(t / 1e12) + "T" : t >= 1e9 ? figure_text(t / 1e9) + "B" : t >= 1e6 ? figure_text(t / 1e6) + "M"
                                                                                          : figure_text(t);
}

std::string plan_text(const CapacityPlan& p, std::size_t width) {
  std::string out = fit_lines("PLAN (gpuscale plan; docs/capacity.md): " + model_line(p), width) + "\n";
  out += fit_lines("  workload: " + workload_line(p.workload), width) + "\n";
  out += fit_lines("  checkpoint: " + checkpoint_line(p), width) + "\n";
  out += fit_lines("  power: " + term_text(p.power_source), width) + "\n";
  for (const auto& src : ckpt_sources(p)) out += fit_lines("  ckpt stall from " + term_text(src), width) + "\n";
  for (const auto& s : p.series) {
    out += fit_lines("\n  " + term_text(series_title(s)) + ": " + fit_line(s.scaling), width) + "\n";
    TextTable t;
    for (std::size_t i = 0; i < headers().size(); ++i) t.columns.push_back({headers()[i], i != 2 && i != 10, i == 0});
    for (const auto& c : s.counts) t.rows.push_back(cells(c));
    if (!t.rows.empty()) out += t.render(width, 2);
    for (const auto& k : s.scaling.skipped) out += fit_lines("  not used: " + term_text(k), width) + "\n";
    out += fit_lines("  " + term_text(s.limit_why), width) + "\n";
    out += fit_lines("  " + term_text(max_useful_line(s, p.workload.efficiency_bar)), width) + "\n";
    if (!s.first_bottleneck.empty()) out += fit_lines("  first bottleneck: " + term_text(s.first_bottleneck), width) + "\n";
    out += fit_lines("  " + term_text(answer_line(s)), width) + "\n";
  }
  if (p.best && p.series.size() > 1)
    out += fit_lines("\n  best: " + term_text(series_title(p.series[*p.best])) + ", " + term_text(answer_line(p.series[*p.best])), width) + "\n";
  return out;
}

std::string plan_markdown(const CapacityPlan& p) {
  std::string out = "## Capacity plan\n\n" + markdown_escape(model_line(p)) + "\n\n";
  out += "- workload: " + markdown_escape(workload_line(p.workload)) + "\n";
  out += "- checkpoint: " + markdown_escape(checkpoint_line(p)) + "\n";
  out += "- power: " + markdown_escape(p.power_source) + "\n";
  for (const auto& src : ckpt_sources(p)) out += "- ckpt stall from " + markdown_escape(src) + "\n";
  for (const auto& s : p.series) {
    out += "\n### " + markdown_escape(series_title(s)) + "\n\n" + markdown_escape(fit_line(s.scaling)) + "\n\n";
    std::string head = "|", rule = "|";
    for (const auto& h : headers()) head += " " + h + " |", rule += "---|";
    out += head + "\n" + rule + "\n";
    for (const auto& c : s.counts) {
      out += "|";
      for (const auto& cell : cells(c)) out += " " + markdown_escape(cell) + " |";
      out += "\n";
    }
    out += "\n";
    for (const auto& k : s.scaling.skipped) out += "- not used: " + markdown_escape(k) + "\n";
    for (const auto& line : {s.limit_why, max_useful_line(s, p.workload.efficiency_bar), "first bottleneck: " + s.first_bottleneck, answer_line(s)})
      out += "- " + markdown_escape(line) + "\n";
  }
  return out;
}

std::string plan_html(const CapacityPlan& p) {
  std::string out = "<section class=\"plan\"><h2>Capacity plan</h2>\n<p>" + html_escape(model_line(p)) + "</p>\n<ul>";
  for (const auto& line : {"workload: " + workload_line(p.workload), "checkpoint: " + checkpoint_line(p), "power: " + p.power_source})
    out += "<li>" + html_escape(line) + "</li>";
  for (const auto& src : ckpt_sources(p)) out += "<li>ckpt stall from " + html_escape(src) + "</li>";
  out += "</ul>\n";
  for (const auto& s : p.series) {
    out += "<h3>" + html_escape(series_title(s)) + "</h3>\n<p>" + html_escape(fit_line(s.scaling)) + "</p>\n<table><tr>";
    for (const auto& h : headers()) out += "<th>" + html_escape(h) + "</th>";
    out += "</tr>\n";
    for (const auto& c : s.counts) {
      out += c.measured ? "<tr>" : "<tr class=\"projected\">";
      for (const auto& cell : cells(c)) out += "<td>" + html_escape(cell) + "</td>";
      out += "</tr>\n";
    }
    out += "</table>\n<ul>";
    for (const auto& k : s.scaling.skipped) out += "<li>not used: " + html_escape(k) + "</li>";
    for (const auto& line : {s.limit_why, max_useful_line(s, p.workload.efficiency_bar), "first bottleneck: " + s.first_bottleneck, answer_line(s)})
      out += "<li>" + html_escape(line) + "</li>";
    out += "</ul>\n";
  }
  return out + "</section>\n";
}

nlohmann::json plan_json(const CapacityPlan& p) {
  using json = nlohmann::json;
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  const auto& w = p.workload;
  json out = {{"workload",
               {{"model", w.model},
                {"tokens", w.tokens},
                {"ckpt_every_s", opt(w.ckpt_every_s)},
                {"gpus", w.gpus ? json(*w.gpus) : json(nullptr)},
                {"deadline_s", opt(w.deadline_s)},
                {"layout", w.layout.empty() ? json(nullptr) : json(w.layout)},
                {"efficiency_bar", w.efficiency_bar}}},
              {"model", p.model},
              {"shrunk", p.shrunk},
              {"total_params", p.total_params},
              {"checkpoint", {{"bytes", p.ckpt_bytes}, {"bytes_per_param", p.ckpt_bytes_per_param},
                              {"stall_budget", kCheckpointStallBudget}, {"needed_gb_s", opt(p.ckpt_needed_gb_s)},
                              {"note", p.ckpt_note}}},
              {"power_source", p.power_source},
              {"series", json::array()},
              {"best", p.best ? json(*p.best) : json(nullptr)}};
  for (const auto& s : p.series) {
    const auto& f = s.scaling;
    json series = {{"layout", f.layout},
                   {"scaling", f.scaling},
                   {"shapes", f.series},
                   {"fit", f.fitted ? json{{"a_gpu_us_per_token", f.a}, {"b_gpu_us_per_token", f.b},
                                           {"base_count", f.base_count}, {"rms_rel_error", f.rms_rel_error},
                                           {"measured_counts", f.points.size()}}
                                    : json{{"refused", f.why}}},
                   {"counts", json::array()},
                   {"limit", s.limit_why},
                   {"max_useful_gpus", s.max_useful ? json(*s.max_useful) : json(nullptr)},
                   {"max_useful_text", max_useful_line(s, w.efficiency_bar)},
                   {"first_bottleneck", s.first_bottleneck},
                   {"chosen_gpus", s.chosen ? json(*s.chosen) : json(nullptr)},
                   {"chosen_why", s.chosen_why},
                   {"not_used", f.skipped}};
    for (const auto& c : s.counts)
      series["counts"].push_back({{"gpus", c.gpus},
                                  {"nodes", c.nodes},
                                  {"source", c.measured ? "measured" : "projected"},
                                  {"tokens_per_s", c.tokens_per_s},
                                  {"step_s", c.step_s},
                                  {"efficiency", c.efficiency},
                                  {"train_s", c.train_s},
                                  {"power_w", opt(c.power_w)},
                                  {"energy_j", opt(c.energy_j)},
                                  {"ckpt_stall_s", opt(c.ckpt_stall_s)},
                                  {"ckpt_stall_fraction", opt(c.ckpt_stall_fraction)},
                                  {"ckpt_source", c.ckpt_source},
                                  {"bottleneck", c.bottleneck},
                                  {"bottleneck_why", c.bottleneck_why}});
    out["series"].push_back(std::move(series));
  }
  return out;
}

}  // namespace gpuscale
