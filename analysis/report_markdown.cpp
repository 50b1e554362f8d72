// The report as Markdown (for tickets): the verdict, per-benchmark tables and problems, stragglers, the
// fleet, the projection and the environment. Every string from the result file goes through markdown_escape.
#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/report.h"
#include "analysis/nccl_table.h"
#include "analysis/row_text.h"
#include "core/units.h"

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

void tables(std::string& out, const std::vector<ResultRow>& rows, const DeviceWord& device) {
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
}

void verdict(std::string& out, const RunVerdict& v) {
  out += fmt::format("\n### Verdict: {}\n\n", verdict_word(v.level));
  for (const auto& r : v.reasons) out += "- " + md(r) + "\n";
  out += "- outliers: " + md(v.outliers) + "\n";
  if (v.drain_known) {
    std::string hosts;
    for (const auto& h : v.drain) hosts += (hosts.empty() ? "" : ", ") + md(h);
    out += "- drain list: " + (hosts.empty() ? std::string("empty") : hosts) + "\n";
  }
  out += "- GPU health: " + md(v.health) + "\n";
}

void projection(std::string& out, const Projection& p) {
  out += "\n### Projection (a model fitted to this run, not a measurement)\n\n";
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
      out += fmt::format("| {} | {} | {:.3g} | {:.4g} | {:.1f}% | {} | {} | {:.4g} | {:.4g} |\n", md(c.collective),
                         c.topology, c.fit.alpha_us, c.fit.beta_gbps, c.fit.rms_rel_error * 100, c.fit.points,
                         c.measured_busbw ? fmt::format("{:.4g}", *c.measured_busbw) : "-", c.predicted_busbw[0],
                         c.predicted_busbw[1]);
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
      out += fmt::format("| {} | {:.4g} | {:.1f}% | measured |\n", m.gpu_count, m.step_time_us, m.efficiency * 100);
    for (const auto& m : d.predicted)
      out += fmt::format("| {} | {:.4g} | {:.1f}% | PROJECTED |\n", m.gpu_count, m.step_time_us, m.efficiency * 100);
  }
}

}  // namespace

std::string report_markdown(const std::vector<FileReport>& files) {
  std::string out = "# gpuscale report\n";
  for (const auto& f : files) {
    out += fmt::format("\n## {}\n", md(f.run.path));
    verdict(out, f.verdict);
    const auto device = device_word(f.run.doc.value("backend", std::string()));
    tables(out, f.run.rows, device);
    out += fmt::format("\n### Stragglers (more than {:.0f}% below the median of the ranks)\n\n", f.straggler_threshold * 100);
    if (f.stragglers.empty()) out += "None.\n";
    else {
      out += "| benchmark | point | " + device.many + " | rank | host | GPU | UUID | PCI bus id | value | median | below |\n"
             "|---|---|---:|---:|---|---:|---|---|---:|---:|---:|\n";
      for (const auto& s : f.stragglers)
        out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {:.4g} | {:.4g} | {:.1f}% |\n", md(s.row->benchmark),
                           md(params_label(s.row->params, false)), s.row->gpu_count, s.rank, md(s.host), s.device_index,
                           md(s.uuid), md(s.pci_bus_id), s.value, s.median, s.deficit * 100);
    }
    out += fleet_markdown(f);
    out += burn_markdown(f);
    projection(out, f.projection);
    out += training_markdown(f);
    out += "\n### Environment\n\n| | |\n|---|---|\n";
    for (const auto& [k, v] : environment_summary(f.run)) out += fmt::format("| {} | {} |\n", k, md(v));
  }
  return out;
}

}  // namespace gpuscale
