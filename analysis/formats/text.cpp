// The report as terminal text, each file after the other: the verdict, then scaling (the tables), then
// the detail: health and stragglers (the collectives' per-iteration ones too) as the run's summary prints them, the burn-in, the fleet, the
// projection, the training step, the environment. No option asks for it, so it is not in
// report_formats(): `gpuscale report` prints it when no format takes standard output.
#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/health_text.h"
#include "analysis/iteration_stragglers.h"
#include "analysis/report_section.h"
#include "analysis/reporter.h"
#include "analysis/row_text.h"

namespace gpuscale {
namespace {

std::string verdict(const FileReport& r, const TextStyle& style) {
  return fit_lines(fmt::format("== {} ==\n", term_text(r.run.path)) + format_verdict(r.verdict), style.width);
}

std::string tables(const FileReport& r, const TextStyle& style) { return format_summary(r.run.rows, style); }

std::string health(const FileReport& r, const TextStyle& style) {
  return fit_lines(format_health(r.run.doc.contains("health") ? r.run.doc["health"] : nlohmann::json(), r.run.rows),
                   style.width);
}

std::string stragglers(const FileReport& r, const TextStyle& style) {
  return format_stragglers(r.stragglers, r.straggler_threshold, style) +
         format_iteration_stragglers(find_iteration_stragglers(r.run.rows), style);  // as the run's summary
}

std::string projection(const FileReport& r, const TextStyle& style) {
  return fit_lines(format_projection(r.projection), style.width);
}

std::string environment(const FileReport& r, const TextStyle& style) {
  std::string env = "\nenvironment\n";
  for (const auto& [k, v] : environment_summary(r.run)) env += fmt::format("  {:<16} {}\n", k, term_text(v));
  return fit_lines(env, style.width, 19);  // continuation lines under the values
}

std::string file_text(const FileReport& r, std::size_t width) {
  TextStyle style;
  style.width = width;
  style.device = device_word(r.run.doc.value("backend", std::string()));
  // The verdict first, then scaling, then the detail.
  const TextSection sections[] = {
      verdict,
      tables,
      health,
      burn_section().text,
      stragglers,
      fleet_section().text,
      projection,
      training_section().text,
      environment,
  };
  std::string out;
  for (const TextSection section : sections) out += section(r, style);
  return out;
}

class TerminalReporter final : public Reporter {
 public:
  explicit TerminalReporter(std::size_t width) : width_(width) {}
  std::string_view flag() const override { return ""; }  // none: the command's own output
  std::string_view help() const override { return "terminal text (printed when no format takes standard output)"; }
  bool may_write_stdout() const override { return true; }

  std::string render(const std::vector<FileReport>& files, const ReportExtras& extras) const override {
    std::string out = extras.opening.text;
    for (std::size_t i = 0; i < files.size(); ++i) out += (i ? "\n" : "") + file_text(files[i], width_);
    if (!extras.closing.text.empty()) out += (files.empty() ? "" : "\n") + extras.closing.text;
    return out;
  }

 private:
  std::size_t width_;
};

}  // namespace

std::unique_ptr<Reporter> terminal_reporter(std::size_t width) { return std::make_unique<TerminalReporter>(width); }

}  // namespace gpuscale
