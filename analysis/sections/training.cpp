// The report's training-step section: per train-step series, each GPU count's step split into its
// phases, the efficiency against the layout's smallest count, and the max-useful-GPUs line
// (analysis/train_scaling.h); the terminal text is the run summary's (format_train_scaling).
#include <fmt/format.h>

#include "text/escape.h"
#include "text/number_text.h"
#include "analysis/report_section.h"
#include "text/svg_chart.h"

namespace gpuscale {
namespace {

constexpr const char* kIntro =
    "Each bar is one GPU count's step on its slowest rank, split into compute, each pattern's communication "
    "(every collective is exposed: the step runs its operations one after another), the pipeline bubble "
    "(derived from the measured compute) and the wait for the slowest rank. Efficiency: per-GPU tokens/s against "
    "the layout's smallest measured count.";

std::string count_label(int n) { return fmt::format("{} GPU{}", n, n == 1 ? "" : "s"); }

// A table: kept whole, like the nccl-tests tables.
std::string training_text(const FileReport& r, const TextStyle&) { return format_train_scaling(r.training); }

std::string training_markdown(const FileReport& r) {
  if (r.training.empty()) return {};
  std::string out = "\n### Training step scaling (train-step)\n\n" + markdown_escape(kIntro) + "\n";
  for (const auto& s : r.training) {
    out += fmt::format("\n**{} {} {}** ({})\n\n", markdown_escape(s.model), markdown_escape(s.layout), s.scaling,
                       markdown_escape(s.series));
    if (!s.points.empty()) {
      out += "| GPUs | tokens/s | step (us) | efficiency |";
      std::string rule = "|---:|---:|---:|---:|";
      for (const auto& ph : s.points.front().phases) out += " " + markdown_escape(ph.name) + " (us) |", rule += "---:|";
      out += "\n" + rule + "\n";
      for (const auto& p : s.points) {
        out += fmt::format("| {} | {} | {} | {:.1f}% |", p.gpu_count, figure_text(p.tokens_per_s), figure_text(p.step_us),
                           p.efficiency * 100);
        for (const auto& ph : p.phases) out += " " + figure_text(ph.us) + " |";
        out += "\n";
      }
    }
    for (const auto& k : s.skipped) out += fmt::format("\nNot used: {}.\n", markdown_escape(k));
    out += "\n" + markdown_escape(s.max_useful_text) + "\n";
  }
  return out;
}

std::string training_html(const FileReport& r) {
  if (r.training.empty()) return {};
  std::string out = fmt::format("<h3 class=\"training\">Training step scaling (train-step)</h3>\n<p>{}</p>\n",
                                html_escape(kIntro));
  std::string charts;
  for (const auto& s : r.training) {
    out += fmt::format("<p class=\"max-useful\" data-series=\"{}\"><b>{} {} {}</b>: {}</p>\n", html_escape(s.series),
                       html_escape(s.model), html_escape(s.layout), s.scaling, html_escape(s.max_useful_text));
    for (const auto& k : s.skipped) out += fmt::format("<p class=\"absent\">not used: {}</p>\n", html_escape(k));
    if (s.points.empty()) continue;
    BarChart bars;
    bars.kind = "train-phases";
    bars.title = fmt::format("{} {} {}: step time by phase", s.model, s.layout, s.scaling);
    bars.y_label = "us per step (slowest rank)";
    bars.data = {{"benchmark", "train-step"}, {"series", s.series}};
    for (const auto& ph : s.points.front().phases) bars.parts.push_back(ph.name);
    for (const auto& p : s.points) {
      bars.labels.push_back(fmt::format("{} ({:.0f}%)", count_label(p.gpu_count), p.efficiency * 100));
      double sum = 0;
      std::vector<double> parts;
      for (const auto& ph : p.phases) parts.push_back(ph.us), sum += ph.us;
      bars.values.push_back(sum);
      bars.parts_of.push_back(std::move(parts));
    }
    bars.note = chart_label("(%): " + s.scaling + "-scaling efficiency; " + s.max_useful_text, 110);
    charts += render_bar_chart(bars);
  }
  return out + "<div class=\"charts\">\n" + charts + "</div>\n";
}

}  // namespace

const ReportSection& training_section() {
  static const ReportSection training{training_text, training_markdown, training_html};
  return training;
}

}  // namespace gpuscale
