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

// Each input's entry of merged_from, and the inputs whose rows are merged (`usable`): those that were
// read, measured with the first such input's backend (rows of two backends are not the same points).
// What keeps an input out goes to `problems`.
struct Admitted {
  json merged_from = json::array();
  std::vector<std::size_t> usable;
};
Admitted admit_inputs(const std::vector<MergeInput>& inputs, std::vector<std::string>& problems) {
  Admitted a;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const MergeInput& in = inputs[i];
    std::string status = "merged", error = in.error;
    if (!error.empty() || !in.run) {
      status = "unreadable";
      if (error.empty()) error = "no result document";
    } else if (!a.usable.empty() && in.run->doc.at("backend") != inputs[a.usable.front()].run->doc.at("backend")) {
      status = "rejected";
      error = fmt::format("measured with the {} backend, but {} with {}", in.run->doc.at("backend").get<std::string>(),
                          inputs[a.usable.front()].file, inputs[a.usable.front()].run->doc.at("backend").get<std::string>());
    } else {
      a.usable.push_back(i);
    }
    if (status != "merged") problems.push_back(fmt::format("{}: {}", in.file, error));
    a.merged_from.push_back(describe(in, status, status == "merged" ? "" : error));
  }
  return a;
}

// The rows kept: one per key, the better of two (measured before not, then the larger world, then the
// later input), in the order of their points' first appearance (`order`: the base input first), each
// point's by GPU count. `superseded`: per input, its rows another input's replaced.
struct KeptRows {
  std::vector<Kept> kept;
  std::map<std::string, std::size_t> point_rank;  // point key -> its place in the merged plan
  std::vector<int> superseded;
};
KeptRows keep_best_rows(const std::vector<MergeInput>& inputs, const std::vector<std::size_t>& order) {
  KeptRows k;
  k.superseded.assign(inputs.size(), 0);
  std::map<std::string, std::size_t> slot_of;  // row key -> index in kept
  auto better = [&](const Kept& a, const Kept& b) {  // a beats b
    return std::make_tuple(measured(*a.row), world_size(inputs[a.input].run->doc), a.input) >
           std::make_tuple(measured(*b.row), world_size(inputs[b.input].run->doc), b.input);
  };
  for (std::size_t i : order)
    for (const ResultRow& row : inputs[i].run->rows) {
      k.point_rank.emplace(point_key(row), k.point_rank.size());
      const std::string key = row_key(row);
      const Kept cand{i, &row};
      auto [it, fresh] = slot_of.emplace(key, k.kept.size());
      if (fresh) {
        k.kept.push_back(cand);
      } else if (better(cand, k.kept[it->second])) {
        ++k.superseded[k.kept[it->second].input];
        k.kept[it->second] = cand;
      } else {
        ++k.superseded[i];
      }
    }
  std::stable_sort(k.kept.begin(), k.kept.end(), [&](const Kept& a, const Kept& b) {
    return std::make_tuple(k.point_rank.at(point_key(*a.row)), a.row->gpu_count) <
           std::make_tuple(k.point_rank.at(point_key(*b.row)), b.row->gpu_count);
  });
  return k;
}

// The kept rows, each marked with its input, into `rows`; what the merged plan and summary count of
// them: the benchmarks in order, the GPU counts (sorted, once each), the rows of each status and of
// each input.
struct RowTally {
  json benchmarks = json::array();
  std::vector<int> gpu_counts;
  std::map<std::string, int> status_count;
  std::vector<int> kept_per_input;
};
RowTally take_rows(const std::vector<Kept>& kept, std::size_t inputs, std::vector<ResultRow>& rows) {
  RowTally t;
  t.kept_per_input.assign(inputs, 0);
  rows.reserve(kept.size());
  for (const Kept& k : kept) {
    ResultRow row = *k.row;
    row.input = static_cast<int>(k.input);
    ++t.kept_per_input[k.input];
    ++t.status_count[std::string(row_status_name(row.status))];
    t.gpu_counts.push_back(row.gpu_count);
    if (std::find(t.benchmarks.begin(), t.benchmarks.end(), row.benchmark) == t.benchmarks.end()) t.benchmarks.push_back(row.benchmark);
    rows.push_back(std::move(row));
  }
  std::sort(t.gpu_counts.begin(), t.gpu_counts.end());
  t.gpu_counts.erase(std::unique(t.gpu_counts.begin(), t.gpu_counts.end()), t.gpu_counts.end());
  return t;
}

// Hosts: the base's, then any host only other inputs ran on (no ranks in the base's numbering).
json merged_hosts(const json& bdoc, const std::vector<MergeInput>& inputs, const std::vector<std::size_t>& order) {
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
  return hosts;
}

// What the merged file says of the set as a whole, from its inputs' headers: complete only when every
// input was merged (`all_merged`) and is complete itself; the worst exit code (null once one is
// unknown); every interruption, named by its file; the latest finish and the earliest start; the
// clusters joined; the first test fault.
struct SetFacts {
  bool complete = true;
  json exit_code = 0, finished = "", created = "", interrupted = json(nullptr), test_fault = json(nullptr);
  std::string cluster;
};
SetFacts set_facts(const std::vector<MergeInput>& inputs, const std::vector<std::size_t>& usable, bool all_merged) {
  SetFacts f;
  f.complete = all_merged;
  std::vector<std::string> clusters;
  for (std::size_t i : usable) {
    const json& d = inputs[i].run->doc;
    const json& s = d.at("summary");
    f.complete = f.complete && s.at("complete").get<bool>();
    if (s.at("exit_code").is_number_integer() && f.exit_code.is_number_integer())
      f.exit_code = std::max(f.exit_code.get<int>(), s.at("exit_code").get<int>());
    else
      f.exit_code = nullptr;
    if (s.contains("interrupted") && s.at("interrupted").is_string()) {
      const auto line = fmt::format("{}: {}", inputs[i].file, s.at("interrupted").get<std::string>());
      f.interrupted = f.interrupted.is_null() ? json(line) : json(f.interrupted.get<std::string>() + "; " + line);
    }
    if (d.at("finished_utc").is_null() || f.finished.is_null()) f.finished = nullptr;
    else f.finished = std::max(f.finished.get<std::string>(), d.at("finished_utc").get<std::string>());
    const auto c = d.at("created_utc").get<std::string>();
    if (f.created.get<std::string>().empty() || c < f.created.get<std::string>()) f.created = c;
    const auto name = d.at("cluster").at("name").get<std::string>();
    if (std::find(clusters.begin(), clusters.end(), name) == clusters.end()) clusters.push_back(name);
    if (f.test_fault.is_null() && d.contains("test_fault")) f.test_fault = d.at("test_fault");
  }
  for (const auto& c : clusters) f.cluster += (f.cluster.empty() ? "" : "+") + c;
  return f;
}

}  // namespace

// The inputs admitted, the base chosen, the best row of each key kept, then the merged header from
// the base's and the set's facts.
MergeOutcome merge_results(const std::vector<MergeInput>& inputs, const MergeContext& ctx) {
  MergeOutcome out;
  auto [merged_from, usable] = admit_inputs(inputs, out.problems);
  if (usable.empty())
    throw Error(fmt::format("nothing to merge: no input could be read ({})", fmt::join(out.problems, "; ")));

  // The base input (largest world, the first of equals) provides the header.
  std::size_t base = usable.front();
  for (std::size_t i : usable)
    if (world_size(inputs[i].run->doc) > world_size(inputs[base].run->doc)) base = i;
  const json& bdoc = inputs[base].run->doc;

  std::vector<std::size_t> order = {base};
  for (std::size_t i : usable)
    if (i != base) order.push_back(i);
  const KeptRows kept = keep_best_rows(inputs, order);
  RowTally tally = take_rows(kept.kept, inputs.size(), out.rows);
  if (tally.gpu_counts.empty()) tally.gpu_counts = bdoc.at("plan").at("gpu_counts").get<std::vector<int>>();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    merged_from[i]["rows_kept"] = tally.kept_per_input[i];
    merged_from[i]["rows_superseded"] = kept.superseded[i];
  }

  const SetFacts set = set_facts(inputs, usable, out.problems.empty());
  const int invalid = tally.status_count["invalid"], failed = tally.status_count["failed"];
  json plan = {{"gpu_counts", tally.gpu_counts},
               {"benchmarks", tally.benchmarks},
               {"points", kept.point_rank.size()},
               {"seed", bdoc.at("plan").at("seed")},
               {"options", bdoc.at("plan").at("options")}};
  out.header = {{"schema", kResultSchemaName},
                {"schema_version", kResultSchemaVersion},
                {"tool", {{"name", "gpuscale"}, {"version", ctx.tool_version}, {"commit", ctx.tool_commit}}},
                {"created_utc", set.created},
                {"finished_utc", set.finished},
                {"cluster", {{"name", set.cluster}, {"source", "merge"}}},
                {"backend", bdoc.at("backend")},
                {"command_line", ctx.command_line},
                {"environment", common_environment(inputs, usable)},
                {"test_fault", set.test_fault},
                {"slurm", nullptr},
                {"mpi", bdoc.at("mpi")},
                {"software", bdoc.at("software")},
                {"hosts", merged_hosts(bdoc, inputs, order)},
                {"ranks", bdoc.at("ranks")},
                {"links", bdoc.at("links")},
                {"plan", plan},
                {"results", json::array()},
                {"summary",
                 {{"complete", set.complete},
                  {"valid", invalid == 0 && failed == 0},
                  {"rows", out.rows.size()},
                  {"ok", tally.status_count["ok"]},
                  {"invalid", invalid},
                  {"failed", failed},
                  {"skipped", tally.status_count["skipped"]},
                  {"exit_code", set.complete ? set.exit_code : json(nullptr)},
                  {"interrupted", set.interrupted}}},
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
