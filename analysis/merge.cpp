#include "analysis/merge.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "results/result_document.h"
#include "results/result_file.h"
#include "results/result_schema.h"

namespace gpuscale {
namespace {

using nlohmann::json;

bool measured(const ResultRow& row) { return row.status == RowStatus::ok || row.status == RowStatus::invalid; }

int world_size(const json& doc) { return doc.at("mpi").at("world_size").get<int>(); }

// What merged_from says about one input before its rows are counted.
json describe(const MergeInput& in, const std::string& status, const std::string& error) {
  json e = {{"file", in.file},   {"status", status},          {"error", error.empty() ? json(nullptr) : json(error)},
            {"job_id", nullptr}, {"cluster", nullptr},        {"created_utc", nullptr},
            {"world_size", nullptr}, {"hosts", json::array()}, {"complete", nullptr},
            {"valid", nullptr},  {"exit_code", nullptr},      {"interrupted", nullptr},
            {"rows", 0},         {"rows_kept", 0},            {"rows_superseded", 0},
            {"tool_version", nullptr}, {"seed", nullptr},     {"slurm", nullptr}};
  if (!in.run) return e;
  const json& d = in.run->doc;
  const json& slurm = d.at("slurm");
  e["job_id"] = slurm.is_object() ? slurm.at("job_id") : json(nullptr);
  e["slurm"] = slurm;
  e["cluster"] = d.at("cluster").at("name");
  e["created_utc"] = d.at("created_utc");
  e["world_size"] = world_size(d);
  for (const auto& h : d.at("hosts")) e["hosts"].push_back(h.at("name"));
  const json& s = d.at("summary");
  e["complete"] = s.at("complete");
  e["valid"] = s.at("valid");
  e["exit_code"] = s.at("exit_code");
  e["interrupted"] = s.value("interrupted", json(nullptr));
  e["rows"] = in.run->rows.size();
  e["tool_version"] = d.at("tool").at("version");
  e["seed"] = d.at("plan").at("seed");
  return e;
}

std::string point_key(const ResultRow& row) { return row.benchmark + "|" + row.params.dump(); }

struct Kept {
  std::size_t input;  // index into inputs / merged_from
  const ResultRow* row;
};

// Environment entries every input agrees on (same name, same value).
json common_environment(const std::vector<MergeInput>& inputs, const std::vector<std::size_t>& usable) {
  json env = inputs[usable.front()].run->doc.at("environment");
  for (std::size_t i : usable) {
    const json& other = inputs[i].run->doc.at("environment");
    for (auto it = env.begin(); it != env.end();) {
      auto o = other.find(it.key());
      if (o == other.end() || *o != it.value()) it = env.erase(it);
      else ++it;
    }
  }
  return env;
}

}  // namespace

MergeOutcome merge_results(const std::vector<MergeInput>& inputs, const MergeContext& ctx) {
  MergeOutcome out;
  json merged_from = json::array();
  std::vector<std::size_t> usable;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const MergeInput& in = inputs[i];
    std::string status = "merged", error = in.error;
    if (!error.empty() || !in.run) {
      status = "unreadable";
      if (error.empty()) error = "no result document";
    } else if (!usable.empty() && in.run->doc.at("backend") != inputs[usable.front()].run->doc.at("backend")) {
      status = "rejected";
      error = fmt::format("measured with the {} backend, but {} with {}", in.run->doc.at("backend").get<std::string>(),
                          inputs[usable.front()].file, inputs[usable.front()].run->doc.at("backend").get<std::string>());
    } else {
      usable.push_back(i);
    }
    if (status != "merged") out.problems.push_back(fmt::format("{}: {}", in.file, error));
    merged_from.push_back(describe(in, status, status == "merged" ? "" : error));
  }
  if (usable.empty())
    throw Error(fmt::format("nothing to merge: no input could be read ({})", fmt::join(out.problems, "; ")));

  // The base input (largest world, the first of equals) provides the header.
  std::size_t base = usable.front();
  for (std::size_t i : usable)
    if (world_size(inputs[i].run->doc) > world_size(inputs[base].run->doc)) base = i;
  const json& bdoc = inputs[base].run->doc;

  // One row per key; the order of points is their first appearance, base first.
  std::vector<std::size_t> order = {base};
  for (std::size_t i : usable)
    if (i != base) order.push_back(i);
  std::map<std::string, std::size_t> slot_of;  // row key -> index in kept
  std::map<std::string, std::size_t> point_rank;
  std::vector<Kept> kept;
  auto better = [&](const Kept& a, const Kept& b) {  // a beats b
    return std::make_tuple(measured(*a.row), world_size(inputs[a.input].run->doc), a.input) >
           std::make_tuple(measured(*b.row), world_size(inputs[b.input].run->doc), b.input);
  };
  std::vector<int> superseded(inputs.size(), 0);
  for (std::size_t i : order)
    for (const ResultRow& row : inputs[i].run->rows) {
      point_rank.emplace(point_key(row), point_rank.size());
      const std::string key = row_key(row);
      const Kept cand{i, &row};
      auto [it, fresh] = slot_of.emplace(key, kept.size());
      if (fresh) {
        kept.push_back(cand);
      } else if (better(cand, kept[it->second])) {
        ++superseded[kept[it->second].input];
        kept[it->second] = cand;
      } else {
        ++superseded[i];
      }
    }
  std::stable_sort(kept.begin(), kept.end(), [&](const Kept& a, const Kept& b) {
    return std::make_tuple(point_rank.at(point_key(*a.row)), a.row->gpu_count) <
           std::make_tuple(point_rank.at(point_key(*b.row)), b.row->gpu_count);
  });

  json benchmarks = json::array();
  std::vector<int> kept_per_input(inputs.size(), 0);
  std::vector<int> gpu_counts;
  std::map<std::string, int> status_count;
  out.rows.reserve(kept.size());
  for (const Kept& k : kept) {
    ResultRow row = *k.row;
    row.input = static_cast<int>(k.input);
    ++kept_per_input[k.input];
    ++status_count[std::string(row_status_name(row.status))];
    gpu_counts.push_back(row.gpu_count);
    if (std::find(benchmarks.begin(), benchmarks.end(), row.benchmark) == benchmarks.end()) benchmarks.push_back(row.benchmark);
    out.rows.push_back(std::move(row));
  }
  std::sort(gpu_counts.begin(), gpu_counts.end());
  gpu_counts.erase(std::unique(gpu_counts.begin(), gpu_counts.end()), gpu_counts.end());
  if (gpu_counts.empty()) gpu_counts = bdoc.at("plan").at("gpu_counts").get<std::vector<int>>();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    merged_from[i]["rows_kept"] = kept_per_input[i];
    merged_from[i]["rows_superseded"] = superseded[i];
  }

  // Hosts: the base's, then any host only other inputs ran on (no ranks in the base's numbering).
  json hosts = bdoc.at("hosts");
  for (std::size_t i : order)
    for (const json& h : inputs[i].run->doc.at("hosts")) {
      const bool known = std::any_of(hosts.begin(), hosts.end(), [&](const json& x) { return x.at("name") == h.at("name"); });
      if (!known)
      {
        hosts.push_back({{"name", h.at("name")}, {"node_index", hosts.size()}, {"cpu_model", h.at("cpu_model")},
                         {"ranks", json::array()}});
        if (h.contains("virtualization")) hosts.back()["virtualization"] = h["virtualization"];
      }
    }

  // Set-wide facts: complete only when every input was merged and is complete itself.
  bool complete = out.problems.empty();
  json exit_code = 0, finished = "", created = "", interrupted = json(nullptr), test_fault = json(nullptr);
  std::vector<std::string> clusters;
  for (std::size_t i : usable) {
    const json& d = inputs[i].run->doc;
    const json& s = d.at("summary");
    complete = complete && s.at("complete").get<bool>();
    if (s.at("exit_code").is_number_integer() && exit_code.is_number_integer())
      exit_code = std::max(exit_code.get<int>(), s.at("exit_code").get<int>());
    else
      exit_code = nullptr;
    if (s.contains("interrupted") && s.at("interrupted").is_string()) {
      const auto line = fmt::format("{}: {}", inputs[i].file, s.at("interrupted").get<std::string>());
      interrupted = interrupted.is_null() ? json(line) : json(interrupted.get<std::string>() + "; " + line);
    }
    if (d.at("finished_utc").is_null() || finished.is_null()) finished = nullptr;
    else finished = std::max(finished.get<std::string>(), d.at("finished_utc").get<std::string>());
    const auto c = d.at("created_utc").get<std::string>();
    if (created.get<std::string>().empty() || c < created.get<std::string>()) created = c;
    const auto name = d.at("cluster").at("name").get<std::string>();
    if (std::find(clusters.begin(), clusters.end(), name) == clusters.end()) clusters.push_back(name);
    if (test_fault.is_null() && d.contains("test_fault")) test_fault = d.at("test_fault");
  }
  std::string cluster;
  for (const auto& c : clusters) cluster += (cluster.empty() ? "" : "+") + c;
  const int invalid = status_count["invalid"], failed = status_count["failed"];

  json plan = {{"gpu_counts", gpu_counts},
               {"benchmarks", benchmarks},
               {"points", point_rank.size()},
               {"seed", bdoc.at("plan").at("seed")},
               {"options", bdoc.at("plan").at("options")}};
  out.header = {{"schema", kResultSchemaName},
                {"schema_version", kResultSchemaVersion},
                {"tool", {{"name", "gpuscale"}, {"version", ctx.tool_version}, {"commit", ctx.tool_commit}}},
                {"created_utc", created},
                {"finished_utc", finished},
                {"cluster", {{"name", cluster}, {"source", "merge"}}},
                {"backend", bdoc.at("backend")},
                {"command_line", ctx.command_line},
                {"environment", common_environment(inputs, usable)},
                {"test_fault", test_fault},
                {"slurm", nullptr},
                {"mpi", bdoc.at("mpi")},
                {"software", bdoc.at("software")},
                {"hosts", hosts},
                {"ranks", bdoc.at("ranks")},
                {"links", bdoc.at("links")},
                {"plan", plan},
                {"results", json::array()},
                {"summary",
                 {{"complete", complete},
                  {"valid", invalid == 0 && failed == 0},
                  {"rows", out.rows.size()},
                  {"ok", status_count["ok"]},
                  {"invalid", invalid},
                  {"failed", failed},
                  {"skipped", status_count["skipped"]},
                  {"exit_code", complete ? exit_code : json(nullptr)},
                  {"interrupted", interrupted}}},
                {"merged_from", merged_from}};
  return out;
}

std::string merged_result_text(const MergeOutcome& m) {
  if (auto problems = validate_result_json(m.header); !problems.empty())
    throw Error(fmt::format("internal error: the merged document is not a valid result: {}", problems), 1);
  std::vector<std::string> lines;
  lines.reserve(m.rows.size());
  for (std::size_t i = 0; i < m.rows.size(); ++i) {
    const json row = m.rows[i];
    if (auto problems = validate_result_row(row, kResultSchemaVersion, i); !problems.empty())
      throw Error(fmt::format("internal error: the merged document is not a valid result: {}", problems), 1);
    lines.push_back(result_row_line(row));
  }
  return result_document_text(m.header, lines);
}

std::string merged_result_text(const MergeOutcome& m, const std::vector<MergeInput>& inputs,
                               const std::vector<std::vector<std::string>>& lines) {
  if (auto problems = validate_result_json(m.header); !problems.empty())
    throw Error(fmt::format("internal error: the merged document is not a valid result: {}", problems), 1);
  // Each input's rows by key, the first of a key (as merge_results keeps it).
  std::vector<std::map<std::string, std::size_t>> index(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].run)
      for (std::size_t j = 0; j < inputs[i].run->rows.size(); ++j) index[i].emplace(row_key(inputs[i].run->rows[j]), j);
  std::vector<std::string> out;
  out.reserve(m.rows.size());
  for (const auto& row : m.rows) {
    const auto in = static_cast<std::size_t>(row.input.value_or(-1));
    const auto it = in < index.size() ? index[in].find(row_key(row)) : index.front().end();
    if (in >= index.size() || it == index[in].end() || in >= lines.size() || it->second >= lines[in].size())
      throw Error("internal error: a merged row has no line of its input", 1);
    out.push_back(lines[in][it->second]);
  }
  return result_document_text(m.header, out);
}

json merged_document(const MergeOutcome& m) {
  json doc = m.header;
  doc["results"] = m.rows;
  return doc;
}

}  // namespace gpuscale
