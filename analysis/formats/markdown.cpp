// The report as Markdown (for tickets), per file: the verdict, per-benchmark tables and problems,
// stragglers, the fleet, the burn-in, the projection, the training step and the environment. Every
// string from the result file goes through markdown_escape.
#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/nccl_table.h"
#include "analysis/report_section.h"
#include "analysis/reporter.h"
#include "analysis/row_text.h"
#include "core/units.h"
#include "text/number_text.h"

namespace gpuscale {
namespace {

std::string md(const std::string& s) { return markdown_escape(s); }

std::string markdown_table(const TextTable& t) {
  std::string head = "|", rule = "|";
  for (const auto& c : t.columns) {
    head += " " + md(c.header) + " |";
    rule += c.right ? "---:|" : "---|";
  }
  std::string out = head + "\n" + rule + "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (const auto& cell : row) out += " " + md(cell) + " |";
    out += "\n";
  }
  return out;
}

std::string heading(const FileReport& f) { return fmt::format("\n## {}\n", md(f.run.path)); }

std::string tables(const FileReport& f) {
  const auto& rows = f.run.rows;
  const auto device = device_word(f.run.doc.value("backend", std::string()));
  std::string out;
  for (const auto& g : group_rows(rows)) {
    auto h = headline_table(g, device);
    for (std::size_t i = 0; i < h.table.rows.size(); ++i) h.table.rows[i][0] = h.labels[i];  // no rowspan in Markdown
    out += "\n### " + md(h.title) + "\n\n" + markdown_table(h.table);
  }
  // nccl-tests' layout in a code block, so the text is the terminal's and diffs against nccl-tests' own.
  for (const auto& t : nccl_tables(rows))
    out += fmt::format("\n#### {} at {} (nccl-tests layout)\n\n```text\n{}```\n", md(t.benchmark),
                       device.count(t.gpu_count), nccl_table_text(t, device));
  bool any = false;
  for (const auto& r : rows)
    if (row_is_problem(r)) {
      if (!any) out += "\n### Invalid or failed measurements\n\n";
      any = true;
      out += fmt::format("- {} {} at {}: {}\n", md(r.benchmark), md(params_label(r.params, false)),
                         device.count(r.gpu_count),
                         md(r.errors.empty() ? std::string(row_status_name(r.status)) : r.errors.front()));
    }
  return out;
}

std::string verdict(const FileReport& f) {
  const RunVerdict& v = f.verdict;
  std::string out = fmt::format("\n### Verdict: {}\n\n", verdict_word(v.level));
  for (const auto& r : v.reasons) out += "- " + md(r) + "\n";
  out += "- outliers: " + md(v.outliers) + "\n";
  if (!v.power.empty()) out += "- power: " + md(v.power) + "\n";
  if (v.drain_known) {
    std::string hosts;
    for (const auto& h : v.drain) hosts += (hosts.empty() ? "" : ", ") + md(h);
    out += "- drain list: " + (hosts.empty() ? std::string("empty") : hosts) + "\n";
  }
  out += "- GPU health: " + md(v.health) + "\n";
  return out;
}

std::string stragglers(const FileReport& f) {
  const auto device = device_word(f.run.doc.value("backend", std::string()));
  std::string out =
      fmt::format("\n### Stragglers (more than {:.0f}% below the median of the ranks)\n\n", f.straggler_threshold * 100);
  if (f.stragglers.empty()) return out + "None.\n";
  out += "| benchmark | point | " + device.many + " | rank | host | GPU | UUID | PCI bus id | value | median | below |\n"
         "|---|---|---:|---:|---|---:|---|---|---:|---:|---:|\n";
  for (const auto& s : f.stragglers)
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1f}% |\n", md(s.row->benchmark),
                       md(params_label(s.row->params, false)), s.row->gpu_count, s.rank, md(s.host), s.device_index,
                       md(s.uuid), md(s.pci_bus_id), figure_text(s.value), figure_text(s.median), s.deficit * 100);
  return out;
}

std::string projection(const FileReport& f) {
  const Projection& p = f.projection;
  std::string out = "\n### Projection (a model fitted to this run, not a measurement)\n\n";
  if (p.fits.empty()) out += "No collective rows at 2 or more GPUs: nothing to fit.\n";
  else {
    out += fmt::format("Alpha-beta model t = alpha x steps(n) + factor(n) x bytes / beta (ring); busbw at the largest "
                       "size, PROJECTED at {} and {} GPUs assuming the {}-GPU level's alpha and beta hold there.\n\n",
                       p.targets[0], p.targets[1], p.largest_count);
    out += fmt::format("| collective | level | alpha (us) | beta (GB/s) | fit error (RMS) | points | measured busbw at {} | "
                       "PROJECTED at {} | PROJECTED at {} |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n",
                       p.largest_count, p.targets[0], p.targets[1]);
    for (const auto& c : p.collectives) {
      if (!c.fit.ok) {
        out += fmt::format("| {} | {} | no fit: {} | | | | | | |\n", md(c.collective), c.topology,
                           md(c.fit.why.empty() ? "no fit at this level" : c.fit.why));
        continue;
      }
      out += fmt::format("| {} | {} | {:.3g} | {} | {:.1f}% | {} | {} | {} | {} |\n", md(c.collective), c.topology,
                         c.fit.alpha_us, figure_text(c.fit.beta_gbps), c.fit.rms_rel_error * 100, c.fit.points,
                         c.measured_busbw ? figure_text(*c.measured_busbw) : "-", figure_text(c.predicted_busbw[0]),
                         figure_text(c.predicted_busbw[1]));
    }
  }
  if (p.dp_steps.empty()) out += "\ndp-step: no dp-step rows in this file, so no training-step projection.\n";
  for (const auto& d : p.dp_steps) {
    out += fmt::format("\ndp-step {}: ", md(d.series));
    if (!d.ok) {
      out += "not projected: " + md(d.why) + "\n";
      continue;
    }
    out += fmt::format("fit error {:.1f}% RMS.\n\n| GPUs | step (us) | efficiency | |\n|---:|---:|---:|---|\n",
                       d.rms_rel_error * 100);
    for (const auto& m : d.measured)
      out += fmt::format("| {} | {} | {:.1f}% | measured |\n", m.gpu_count, figure_text(m.step_time_us), m.efficiency * 100);
    for (const auto& m : d.predicted)
      out += fmt::format("| {} | {} | {:.1f}% | PROJECTED |\n", m.gpu_count, figure_text(m.step_time_us),
                         m.efficiency * 100);
  }
  return out;
}

std::string environment(const FileReport& f) {
  std::string out = "\n### Environment\n\n| | |\n|---|---|\n";
  for (const auto& [k, v] : environment_summary(f.run)) out += fmt::format("| {} | {} |\n", k, md(v));
  return out;
}

std::string file_markdown(const FileReport& f) {
  // The verdict first, then scaling, then the detail.
  const DocumentPart sections[] = {
      heading,
      verdict,
      tables,
      stragglers,
      fleet_section().markdown,
      burn_section().markdown,
      projection,
      training_section().markdown,
      environment,
  };
  std::string out;
  for (const DocumentPart section : sections) out += section(f);
  return out;
}

class MarkdownReporter final : public Reporter {
 public:
  std::string_view flag() const override { return "--markdown"; }
  std::string_view help() const override { return "write Markdown"; }
  bool may_write_stdout() const override { return true; }

  std::string render(const std::vector<FileReport>& files, const ReportExtras& extras) const override {
    std::string out = "# gpuscale report\n" + extras.opening.markdown;
    for (const auto& f : files) out += file_markdown(f);
    return out + extras.closing.markdown;
  }
};

}  // namespace

const Reporter& markdown_format() {
  static const MarkdownReporter markdown;
  return markdown;
}

}  // namespace gpuscale
