// The burn-in's section of the report (docs/acceptance.md): the drift of each burn kind, the GPUs whose
// output disagreed, and in Markdown and HTML the capacity numbers (boost vs sustained per GPU, W per GPU
// and per node), from the result file's analysis (analysis/burn_drift.h, burn_capacity.h); the terminal
// text is the run summary's (format_burn_drift). The sustained outliers are listed with the fleet's.
// Every string from the file is escaped.
#include <functional>

#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/burn_drift.h"
#include "analysis/report_section.h"
#include "text/number_text.h"

namespace gpuscale {
namespace {

using nlohmann::json;
using Escape = std::function<std::string(const std::string&)>;

const json& section(const FileReport& r, const char* key) {
  static const json none = json::array();
  if (!r.run.doc.contains("analysis") || !r.run.doc["analysis"].is_object()) return none;
  const auto& a = r.run.doc["analysis"];
  return a.contains(key) && a[key].is_array() ? a[key] : none;
}

std::string str(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
}

std::string num(const json& o, const char* key, const char* unit = "") {
  if (!o.is_object() || !o.contains(key) || !o[key].is_number()) return "-";
  return figure_text(o[key].get<double>()) + unit;
}

std::string percent(const json& o, const char* key) {
  if (!o.is_object() || !o.contains(key) || !o[key].is_number()) return "-";
  return fmt::format("{:+.1f}%", o[key].get<double>() * 100);
}

// The rows of the two tables as cells, so one layout serves both formats.
using Rows = std::vector<std::vector<std::string>>;

Rows drift_rows(const FileReport& r, const Escape& esc) {
  Rows out;
  for (const auto& b : section(r, "burn")) {
    const auto& f = b.value("fleet", json::object());
    out.push_back({esc(str(b, "benchmark")), b.value("windows", json(0)).dump(), esc(str(b, "unit")), num(f, "start"),
                   num(f, "end"), percent(f, "drift"), f.value("worst_window", json(nullptr)).dump() + " (" + num(f, "worst") + ")"});
  }
  return out;
}

Rows capacity_rows(const FileReport& r, const Escape& esc) {
  Rows out;
  for (const auto& c : section(r, "capacity")) {
    const auto& node = c.value("power_per_node_w", json::object());
    std::string per_j = c.contains("work_per_j") ? num(c, "work_per_j") + " " + esc(str(c, "work_per_j_unit")) : "-";
    out.push_back({esc(str(c, "benchmark")), esc(str(c, "model")), c.value("gpus", json(0)).dump(),
                   esc(str(c, "unit")) + (str(c, "per") == "job" ? " (job)" : " per GPU"), num(c, "boost"), num(c, "sustained"),
                   c.contains("sustained_ratio") && c["sustained_ratio"].is_number()
                       ? fmt::format("{:.0f}%", c["sustained_ratio"].get<double>() * 100)
                       : "-",
                   num(c, "power_per_gpu_w", " W"), num(node, "median", " W") + " (max " + num(node, "max", " W") + ")",
                   per_j, esc(str(c, "power_invalid"))});
  }
  return out;
}

const std::vector<std::string> kDriftHead = {"kind", "windows", "unit", "start", "end", "drift", "worst window"};
const std::vector<std::string> kCapacityHead = {"kind", "model", "GPUs", "unit", "boost", "sustained", "sustained / boost",
                                                "W per GPU", "W per node", "work per J", "power note"};
constexpr const char* kCapacityNote =
    "Boost: the median of the first quarter of the windows (a cool GPU); sustained: of the last quarter. Power at "
    "sustained load, the mean over the last quarter; W is also the heat to remove.";

std::string md_table(const std::vector<std::string>& head, const Rows& rows) {
  std::string out = "|";
  std::string rule = "|";
  for (const auto& c : head) out += " " + c + " |", rule += "---|";
  out += "\n" + rule + "\n";
  for (const auto& row : rows) {
    out += "|";
    for (const auto& c : row) out += " " + c + " |";
    out += "\n";
  }
  return out;
}

std::string html_table(const char* cls, const std::vector<std::string>& head, const Rows& rows) {
  std::string out = fmt::format("<table class=\"{}\"><tr>", cls);
  for (const auto& c : head) out += "<th>" + html_escape(c) + "</th>";
  out += "</tr>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (const auto& c : row) out += "<td>" + c + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string sdc_line(const json& e) {
  return fmt::format("rank {} ({}, device {}) {} window {}: its output differs from the one {} of {} ranks share, first {}",
                     e.value("rank", json(nullptr)).dump(), str(e, "host"), e.value("device_index", json(nullptr)).dump(),
                     str(e, "benchmark"), e.value("window", json(nullptr)).dump(), e.value("agreeing", json(nullptr)).dump(),
                     e.value("compared", json(nullptr)).dump(),
                     e.contains("element") ? "at element " + e["element"].dump() + " (C" + e.value("at", json()).dump() + ")"
                                           : "in elements " + e.value("elements", json(nullptr)).dump());
}

std::string burn_text(const FileReport& r, const TextStyle& style) {
  return fit_lines(format_burn_drift(r.run.doc.value("analysis", json())), style.width);
}

std::string burn_markdown(const FileReport& r) {
  const Escape esc = markdown_escape;
  const auto drift = drift_rows(r, esc);
  if (drift.empty()) return {};
  std::string out = "\n### Burn-in: drift (the last quarter of the windows against the first)\n\n" + md_table(kDriftHead, drift);
  for (const auto& e : section(r, "sdc")) out += "\n- silent data corruption: " + esc(sdc_line(e)) + "\n";
  out += std::string("\n### Burn-in: capacity\n\n") + kCapacityNote + "\n\n" + md_table(kCapacityHead, capacity_rows(r, esc));
  return out;
}

std::string burn_html(const FileReport& r) {
  const Escape esc = html_escape;
  const auto drift = drift_rows(r, esc);
  if (drift.empty()) return {};
  std::string out = "<h3 class=\"burn\">Burn-in: drift (the last quarter of the windows against the first)</h3>\n" +
                    html_table("burn-drift", kDriftHead, drift);
  for (const auto& e : section(r, "sdc")) out += "<p class=\"fail sdc\">silent data corruption: " + esc(sdc_line(e)) + "</p>\n";
  out += std::string("<h3 class=\"burn\">Burn-in: capacity</h3>\n<p>") + html_escape(kCapacityNote) + "</p>\n" +
         html_table("burn-capacity", kCapacityHead, capacity_rows(r, esc));
  return out;
}

}  // namespace

const ReportSection& burn_section() {
  static const ReportSection burn{burn_text, burn_markdown, burn_html};
  return burn;
}

}  // namespace gpuscale
