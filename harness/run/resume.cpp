#include "harness/run/resume.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "harness/options/run_option_table.h"
#include "harness/plan/plan.h"

namespace gpuscale {
namespace {

using nlohmann::json;

std::string shown(const json& j) { return terminal_quote(j.dump(), 80); }

std::string point_key(const json& benchmark, const json& params) { return benchmark.dump() + "|" + params.dump(); }

// Ranks per node in order of first appearance: {4, 4} for 8 ranks on 2 nodes.
std::vector<int> ranks_per_host(const std::vector<std::string>& hosts) {
  std::vector<std::string> order;
  std::map<std::string, int> count;
  for (const auto& h : hosts) {
    if (!count.count(h)) order.push_back(h);
    ++count[h];
  }
  std::vector<int> out;
  for (const auto& h : order) out.push_back(count[h]);
  return out;
}

std::string shape_text(const std::vector<int>& per_host) {
  std::string out;
  for (std::size_t i = 0; i < per_host.size(); ++i) out += (i ? "+" : "") + std::to_string(per_host[i]);
  return out;
}

}  // namespace

json plan_options_json(const RunOptions& o) {
  json out = json::object();
  for (const auto& f : run_option_table())
    if (f.record) out[f.key] = f.record(o);
  return out;
}

std::vector<std::pair<std::string, std::string>> recorded_option_flags() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : run_option_table())
    if (f.recorded != Recorded::no) out.emplace_back(f.key, f.flag());
  return out;
}

RunOptions adopt_recorded_options(const json& doc, RunOptions o, const std::string& file) {
  const std::string name = terminal_safe(file);
  const auto& recorded = doc.at("plan").at("options");
  const auto backend = doc.at("backend").get<std::string>();
  if (!o.given.count("backend")) o.backend = backend;
  else if (o.backend != backend)
    throw Error(fmt::format("--resume {}: the file was measured with the {} backend, not --backend {}", name, backend,
                            o.backend));
  const auto seed = doc.at("plan").at("seed").get<std::uint64_t>();
  if (o.seed && *o.seed != seed)
    throw Error(fmt::format("--resume {}: --seed {} differs from the file's seed {} (resumed points reuse its inputs)",
                            name, *o.seed, seed));
  o.seed = seed;
  for (const auto& f : run_option_table()) {
    if (f.recorded != Recorded::shapes) continue;
    const json mine = f.record(o);
    if (!recorded.contains(f.key))
      throw Error(fmt::format("--resume {}: plan.options lacks \"{}\" (written by an older gpuscale?): it cannot be "
                              "resumed",
                              name, f.key));
    const json& theirs = recorded.at(f.key);
    if (o.given.count(f.key)) {
      if (mine != theirs)
        throw Error(fmt::format("--resume {}: {} is {} on this command line but {} in the file; resume with the "
                                "file's options (or leave {} out)",
                                name, f.flag(), shown(mine), shown(theirs), f.flag()));
      continue;
    }
    try {
      f.adopt(o, theirs);
    } catch (const BadRecordedValue& bad) {
      throw Error(fmt::format("--resume {}: plan.options.{} is {}, expected {}", name, f.key, shown(theirs), bad.expected));
    }
  }
  return o;
}

std::size_t ResumePlan::remaining() const { return static_cast<std::size_t>(std::count(done.begin(), done.end(), false)); }

json point_list(const json& plan) {
  json out = json::array();
  for (const auto& p : plan.at("points")) {
    out.push_back({{"benchmark", p.at("benchmark")}, {"params", p.at("params")}});
    // A fleet point's one row is at the job's full size: without the mark a resume of a complete file
    // found its smaller counts missing and measured the point again.
    if (p.contains("whole_job")) out.back()["whole_job"] = p.at("whole_job");
  }
  return out;
}

ResumePlan plan_resume(const json& doc, const LaunchShape& launch, const std::string& file, const WholeJobRule& whole_job) {
  const std::string name = terminal_safe(file);
  auto refuse = [&](const std::string& why) { return Error(fmt::format("--resume {}: {}", name, why)); };
  if (doc.contains("merged_from") || doc.at("cluster").value("source", std::string()) == "merge")
    throw refuse("a merged result set (gpuscale merge) cannot be resumed: resume the run it came from");
  const json& plan = doc.at("plan");
  const json* list = plan.contains("point_list") ? &plan.at("point_list") : nullptr;
  if (!list || !list->is_array() || list->size() != plan.at("points").get<std::size_t>())
    throw refuse("the file does not list its planned points (plan.point_list; written by an older gpuscale?)");
  for (const auto& p : *list)
    if (!p.is_object() || !p.contains("benchmark") || !p.at("benchmark").is_string() || !p.contains("params") ||
        !p.at("params").is_object())
      throw refuse("plan.point_list holds an entry that is not {benchmark, params}");

  // The launch: backend, ranks, nodes and ranks per node, device models.
  if (doc.at("backend") != launch.backend)
    throw refuse(fmt::format("the file was measured with the {} backend, this run opened {}",
                             terminal_quote(doc.at("backend").get<std::string>()), launch.backend));
  const auto world = doc.at("mpi").at("world_size").get<std::size_t>();
  if (world != launch.hosts.size())
    throw refuse(fmt::format("the file was measured by {} ranks, this launch has {}: resume with the same number", world,
                             launch.hosts.size()));
  const json& ranks = doc.at("ranks");
  if (ranks.size() != world) throw refuse(fmt::format("the file lists {} ranks for a world of {}", ranks.size(), world));
  std::vector<std::string> hosts(world), devices(world);
  for (const auto& r : ranks) {
    const auto i = r.at("rank").get<std::size_t>();
    if (i >= world || !hosts[i].empty()) throw refuse("the file's ranks are not 0 .. world size - 1, once each");
    hosts[i] = r.at("host").get<std::string>();
    devices[i] = r.at("device").at("name").get<std::string>();
    if (hosts[i].empty()) hosts[i] = "?";
  }
  const auto theirs = ranks_per_host(hosts), mine = ranks_per_host(launch.hosts);
  if (theirs != mine)
    throw refuse(fmt::format("the file's ranks ran {} per node ({} node(s)), this launch's {} ({} node(s)): GPU counts "
                             "would span different nodes",
                             shape_text(theirs), theirs.size(), shape_text(mine), mine.size()));
  for (std::size_t r = 0; r < world && r < launch.devices.size(); ++r)
    if (devices[r] != launch.devices[r])
      throw refuse(fmt::format("rank {} measured a {} in the file but has a {} now", r, terminal_quote(devices[r]),
                               terminal_quote(launch.devices[r])));
  const auto counts = gpu_counts(static_cast<int>(world));
  if (plan.at("gpu_counts").get<std::vector<int>>() != counts)
    throw refuse(fmt::format("plan.gpu_counts is {}, not the GPU counts of {} ranks", shown(plan.at("gpu_counts")), world));

  // Which points are done: a valid row (ok or skipped) at every GPU count.
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < list->size(); ++i)
    if (!index.emplace(point_key((*list)[i].at("benchmark"), (*list)[i].at("params")), i).second)
      throw refuse(fmt::format("plan.point_list holds point {} twice", i));
  // Every row is inside the plan, at one of its GPU counts, once: the semantic validator refused the
  // file otherwise (read_result_document, results/result_semantics.h).
  std::vector<std::map<int, std::string>> status(list->size());  // per point: gpu_count -> status
  for (const auto& row : doc.at("results")) {
    auto it = index.find(point_key(row.at("benchmark"), row.at("params")));
    if (it != index.end()) status[it->second].emplace(row.at("gpu_count").get<int>(), row.at("status").get<std::string>());
  }
  ResumePlan out;
  out.done.resize(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    // A whole-job point (the fleet benchmarks) has its one row at the job's full size.
    const auto& entry = (*list)[i];
    const auto& mark = entry.contains("whole_job") ? entry.at("whole_job") : json(false);
    const bool whole = (mark.is_boolean() && mark.get<bool>()) || (whole_job && whole_job(entry.at("benchmark").get<std::string>()));
    const std::vector<int> needed = whole ? std::vector<int>{counts.back()} : counts;
    out.done[i] = std::all_of(needed.begin(), needed.end(), [&](int k) {
      auto it = status[i].find(k);
      return it != status[i].end() && (it->second == "ok" || it->second == "skipped");
    });
  }
  out.kept_rows = json::array();
  for (const auto& row : doc.at("results")) {
    const auto point = index.at(point_key(row.at("benchmark"), row.at("params")));
    if (!out.done[point]) continue;
    out.kept_rows.push_back(row);
    out.kept_points.push_back(point);
  }
  out.plan = {{"points", *list}, {"seed", plan.at("seed")}};

  // The earlier attempts, then the file's own.
  out.attempts = doc.contains("attempts") && doc.at("attempts").is_array() ? doc.at("attempts") : json::array();
  const auto& slurm = doc.at("slurm");
  json host_names = json::array();
  for (const auto& h : doc.at("hosts")) host_names.push_back(h.at("name"));
  out.attempts.push_back({{"attempt", out.attempts.size()},
                          {"created_utc", doc.at("created_utc")},
                          {"finished_utc", doc.at("finished_utc")},
                          {"command_line", doc.at("command_line")},
                          {"hosts", host_names},
                          {"job_id", slurm.is_object() ? slurm.value("job_id", json(nullptr)) : json(nullptr)},
                          {"tool_version", doc.at("tool").at("version")},
                          {"summary", doc.at("summary")}});
  out.attempt = static_cast<int>(out.attempts.size());
  return out;
}

void order_rows_by_plan(json& results, const json& list) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < list.size(); ++i) index.emplace(point_key(list[i].at("benchmark"), list[i].at("params")), i);
  auto rank = [&](const json& row) {
    auto it = index.find(point_key(row.at("benchmark"), row.at("params")));
    return std::make_pair(it == index.end() ? list.size() : it->second, row.at("gpu_count").get<int>());
  };
  std::vector<json> rows(results.begin(), results.end());
  std::stable_sort(rows.begin(), rows.end(), [&](const json& a, const json& b) { return rank(a) < rank(b); });
  results = json(rows);
}

}  // namespace gpuscale
