#include "analysis/fleet_check.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "text/escape.h"
#include "text/number_text.h"
#include "text/text_width.h"
#include "core/error.h"
#include "core/host_name.h"
#include "analysis/verdict.h"

namespace gpuscale {
namespace {

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string figure(const std::optional<double>& v) { return v ? figure_text(*v) : "-"; }

}  // namespace

std::string outlier_reason(const FleetOutlier& o) {
  if (o.explained_by.empty() || o.explained_by_rail) return o.reason;
  return o.reason + (o.reason.empty() ? "" : " ") + "(explained by suspect " + o.explained_by + ")";
}

std::string outlier_rail(const FleetOutlier& o) {
  if (!o.rail) return "";
  std::string nics;
  for (const auto& n : o.nics) nics += (nics.empty() ? "" : ", ") + n;
  if (nics.empty()) return fmt::format("rail {}", *o.rail);
  const bool unknown = std::find(o.nics.begin(), o.nics.end(), "-") != o.nics.end();
  return fmt::format("rail {} (NIC {}{})", *o.rail, nics, unknown && !o.nic_note.empty() ? ": " + o.nic_note : "");
}

std::string outlier_line(const FleetOutlier& o, const std::vector<ResultRow>& rows) {
  std::string unit = o.unit.empty() ? "" : " " + o.unit;
  for (const auto& r : rows)
    if (unit.empty() && r.benchmark == o.benchmark) unit = " " + r.unit;
  std::string where = o.benchmark;
  if (o.gpu_count) where += fmt::format("{}@ {} GPU(s)", where.empty() ? "" : " ", *o.gpu_count);
  std::string ranks;
  for (int r : o.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
  std::string line = fmt::format("{} {}{}: {}{} vs median {}, {} below; ranks {}", o.kind, o.hosts.empty() ? "-" : join(o.hosts, ","),
                                 where.empty() ? "" : " (" + where + ")", figure(o.value), unit, figure(o.median),
                                 o.deficit ? fmt::format("{:.1f}%", *o.deficit * 100) : "-", ranks.empty() ? "-" : ranks);
  if (const auto rail = outlier_rail(o); !rail.empty()) line += "; " + rail;
  if (!o.explained_by.empty() && !o.explained_by_rail) line += "; explained by suspect " + o.explained_by;
  if (!o.uuids.empty()) line += "; GPU " + join(o.uuids, ",");
  if (!o.pci_bus_ids.empty()) line += "; PCI " + join(o.pci_bus_ids, ",");
  if (!o.reason.empty()) line += "; " + o.reason;
  return line;
}

namespace {

const nlohmann::json& analysis_power(const LoadedResult& run) {
  static const nlohmann::json none;
  const auto& d = run.doc;
  if (!d.is_object() || !d.contains("analysis") || !d["analysis"].is_object() || !d["analysis"].contains("power")) return none;
  return d["analysis"]["power"];
}

}  // namespace

OutlierCheck check_outliers(const LoadedResult& run, const FleetView& view) {
  if (!view.analysed)
    throw Error(fmt::format("{}: no outlier analysis in the file (analysis.outliers is absent: not written by a fleet-aware "
                            "gpuscale run, or the run did not finish), so --fail-on-outliers cannot vouch for it",
                            term_text(run.path)));
  OutlierCheck c{run.path, {}, {}};
  for (const auto& o : view.outliers) c.failures.push_back(outlier_line(o, run.rows));
  c.power = power_text(analysis_power(run));
  return c;
}

std::string drain_list_header(const LoadedResult& run) {
  const auto power = power_text(analysis_power(run));
  return power.empty() ? "" : fmt::format("{}: power: {}", term_text(run.path), term_text(power));
}

std::string format_outlier_check(const OutlierCheck& c, std::size_t width) {
  width = std::max(width, kMinWidth);
  std::string out = wrap_words(fmt::format("outliers in {} (--fail-on-outliers): {}", term_text(c.file),
                                           c.failures.empty() ? "none" : std::to_string(c.failures.size())),
                               width, "  ");
  if (!c.power.empty()) out += wrap_words("  power: " + term_text(c.power), width, "    ");
  for (const auto& f : c.failures) out += wrap_words("  FAIL outlier " + term_text(f), width, "       ");
  return out;
}

JUnitSuite outlier_suite(const OutlierCheck& c) {
  JUnitSuite s{fmt::format("outliers {}", c.file), {}};
  if (c.failures.empty()) s.cases.push_back({"gpuscale.check.outliers", "no outliers", false, false, "", ""});
  for (std::size_t i = 0; i < c.failures.size(); ++i)
    s.cases.push_back({"gpuscale.check.outliers", fmt::format("outlier {}", i + 1), true, false, c.failures[i], c.failures[i]});
  return s;
}

std::vector<std::string> drain_list(const std::vector<const LoadedResult*>& runs) {
  std::set<std::string> hosts;
  for (const LoadedResult* run : runs) {
    const auto view = fleet_view(*run);
    if (!view.hosts_listed)
      throw Error(fmt::format("{}: no analysis.outlier_hosts in the file (not written by a fleet-aware gpuscale run, or the "
                              "run did not finish): no drain list",
                              term_text(run->path)));
    for (std::size_t i = 0; i < view.outlier_hosts.size(); ++i) {
      const auto& h = view.outlier_hosts[i];
      // A leading '-' passes the host-name rule but would read as an option where a script passes the
      // name on as an argument of its own.
      if (!is_host_name(h) || h.front() == '-')
        throw Error(fmt::format("{}: /analysis/outlier_hosts/{} is not a host name (letters, digits, '-', '.', '_', not "
                                "starting with '-'; at most {} characters): '{}'; no drain list",
                                term_text(run->path), i, kMaxHostNameLength, term_text(h.substr(0, 64))));
      hosts.insert(h);
    }
  }
  return {hosts.begin(), hosts.end()};
}

std::vector<std::string> health_drain_list(const nlohmann::json& doc, const std::string& path) {
  if (!doc.is_object() || doc.value("schema", std::string()) != "gpuscale.health" || !doc.contains("nodes") ||
      !doc["nodes"].is_array())
    throw Error(fmt::format("{}: not a gpuscale health document (schema gpuscale.health with nodes): no drain list",
                            term_text(path)));
  std::set<std::string> hosts;
  for (std::size_t i = 0; i < doc["nodes"].size(); ++i) {
    const auto& n = doc["nodes"][i];
    if (!n.is_object() || !n.contains("drain_command") || !n["drain_command"].is_string()) continue;  // not failing
    const auto name = n.value("node_name", std::string());
    if (!is_host_name(name) || name.front() == '-')
      throw Error(fmt::format("{}: /nodes/{}/node_name is not a host name: '{}'; no drain list", term_text(path), i,
                              term_text(name.substr(0, 64))));
    hosts.insert(name);
  }
  return {hosts.begin(), hosts.end()};
}

}  // namespace gpuscale
