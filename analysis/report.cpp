// What every format of the report shares: the FileReport of an input and its environment summary.
#include <map>

#include <fmt/format.h>

#include "analysis/report.h"
#include "text/number_text.h"

namespace gpuscale {
namespace {

std::string str(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "-";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

std::string peak_text(const nlohmann::json& link) {
  const auto& v = link.value("value", nlohmann::json());
  return fmt::format("{} ({})", v.is_number() ? figure_text(v.get<double>()) + " GB/s" : "unknown",
                     str(link, "source"));
}

}  // namespace

FileReport make_file_report(LoadedResult run, double straggler_threshold) {
  FileReport r;
  r.run = std::move(run);
  r.straggler_threshold = straggler_threshold;
  r.stragglers = find_stragglers(r.run.doc, r.run.rows, straggler_threshold);
  r.projection = project(r.run);
  r.training = train_scaling(r.run.rows);
  r.fleet = fleet_view(r.run);
  r.verdict = run_verdict(r.run.doc, r.run.rows, r.stragglers.size());
  return r;
}

std::vector<std::pair<std::string, std::string>> environment_summary(const LoadedResult& run) {
  const auto& d = run.doc;
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("cluster", fmt::format("{} (from {})", str(d["cluster"], "name"), str(d["cluster"], "source")));
  out.emplace_back("created", fmt::format("{}, finished {}", str(d, "created_utc"), str(d, "finished_utc")));
  out.emplace_back("tool", fmt::format("gpuscale {} (commit {})", str(d["tool"], "version"), str(d["tool"], "commit")));
  out.emplace_back("backend", str(d, "backend"));
  std::string models;
  for (const auto& m : run.device_models) models += (models.empty() ? "" : "; ") + m;
  out.emplace_back("devices", fmt::format("{} rank(s): {}", d["ranks"].size(), models));
  std::string hosts;
  for (const auto& h : d["hosts"])
    hosts += (hosts.empty() ? "" : ", ") + fmt::format("{} ({} rank(s))", str(h, "name"), h["ranks"].size());
  out.emplace_back("hosts", fmt::format("{}: {}", d["hosts"].size(), hosts));
  // Virtualisation (core/virtualization.h), as the hosts say it: the kinds found and how many hosts each.
  std::map<std::string, int> kinds;
  for (const auto& h : d["hosts"]) {
    if (!h.contains("virtualization") || !h["virtualization"].is_object()) continue;
    const auto& v = h["virtualization"];
    const auto vm = v.value("virtual_machine", nlohmann::json(nullptr));
    const std::string name = str(v, "hypervisor");
    kinds[vm.is_boolean() && !vm.get<bool>() ? "bare metal"
          : vm.is_boolean()                  ? (name.empty() || name == "-" ? "virtual machine" : name + " virtual machine")
                                             : "unknown"]++;
  }
  if (!kinds.empty()) {
    std::string text;
    for (const auto& [k, n] : kinds) text += (text.empty() ? "" : ", ") + fmt::format("{} ({} host(s))", k, n);
    out.emplace_back("virtualization", text);
  }
  out.emplace_back("MPI", fmt::format("{}, world size {}", str(d["mpi"], "library"), str(d["mpi"], "world_size")));
  std::string sw;
  for (const auto& [k, v] : d["software"].items()) sw += (sw.empty() ? "" : "; ") + k + " " + (v.is_string() ? v.get<std::string>() : "-");
  out.emplace_back("software", sw);
  out.emplace_back("Slurm", d["slurm"].is_null() ? "not a Slurm job"
                                                 : fmt::format("job {} on {} ({})", str(d["slurm"], "job_id"),
                                                               str(d["slurm"], "nodelist"), str(d["slurm"], "partition")));
  out.emplace_back("intra-node link", peak_text(d["links"]["intra_node"]));
  out.emplace_back("inter-node link", peak_text(d["links"]["inter_node"]));
  std::string counts;
  for (const auto& n : d["plan"]["gpu_counts"]) counts += (counts.empty() ? "" : ", ") + n.dump();
  out.emplace_back("GPU counts", counts);
  const auto& s = d["summary"];
  out.emplace_back("rows", fmt::format("{} ({} ok, {} invalid, {} failed, {} skipped); complete: {}, valid: {}",
                                       str(s, "rows"), str(s, "ok"), str(s, "invalid"), str(s, "failed"),
                                       str(s, "skipped"), str(s, "complete"), str(s, "valid")));
  return out;
}

}  // namespace gpuscale
