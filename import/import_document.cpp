// Imported inputs to a result file (import/import_document.h).
#include "import/import_document.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "results/result_document.h"
#include "results/result_io.h"
#include "results/result_semantics.h"

namespace gpuscale {
namespace {

using nlohmann::json;

std::string host_of(const ImportedRank& r) { return r.host.empty() ? kUnnamedHost : utf8_escaped(r.host); }

json optional_text(const std::optional<std::string>& s) { return s ? json(utf8_escaped(*s)) : json(nullptr); }

// The world the inputs describe together: rank k is where every input that names it says it is.
std::vector<ImportedRank> world_of(const std::vector<ImportedInput>& inputs) {
  std::vector<ImportedRank> world;
  std::vector<std::size_t> named_by;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    for (const auto& r : inputs[i].ranks) {
      const auto k = static_cast<std::size_t>(r.rank);
      if (k >= world.size()) {
        world.resize(k + 1);
        named_by.resize(k + 1, SIZE_MAX);
      }
      if (named_by[k] == SIZE_MAX) {
        world[k] = r;
        named_by[k] = i;
      } else if (host_of(world[k]) != host_of(r) || world[k].device != r.device) {
        throw Error(fmt::format("{} places rank {} on {} device {}, but {} on {} device {}: import them separately",
                                terminal_safe(inputs[i].file), r.rank, terminal_quote(host_of(r)), r.device,
                                terminal_safe(inputs[named_by[k]].file), terminal_quote(host_of(world[k])), world[k].device));
      }
    }
  for (std::size_t k = 0; k < world.size(); ++k)
    if (named_by[k] == SIZE_MAX) throw Error(fmt::format("no input names rank {} of the {} ranks they use", k, world.size()));
  return world;
}

json row_json(const ImportedRow& r, const std::vector<ImportedRank>& world, const std::string& peak_reason, std::size_t input) {
  ResultRow row;
  row.benchmark = r.benchmark;
  row.scope = r.scope;
  row.params = r.params;
  row.gpu_count = static_cast<int>(r.ranks.size());
  std::set<std::string> hosts;
  for (int k : r.ranks) {
    const auto& w = world[static_cast<std::size_t>(k)];
    hosts.insert(host_of(w));
    RankValue v;
    v.rank = k;
    v.host = host_of(w);
    v.device_index = w.device;
    v.metrics = r.rank_metrics;
    if (r.status == RowStatus::invalid) {
      v.valid = false;
      v.error = "the tool counts wrong values over all ranks and does not say whose";
    }
    row.ranks.push_back(std::move(v));
  }
  row.nodes = static_cast<int>(hosts.size());
  row.topology = row.gpu_count == 1 ? "single" : row.nodes == 1 ? "intra-node" : "inter-node";
  row.unit = r.unit;
  row.status = r.status;
  row.aggregate = r.aggregate;
  row.efficiency_basis = "none: an imported row has no scaling reference";
  row.peak_source = peak_reason;
  row.metrics = r.metrics;
  row.metrics["import_input"] = input;
  row.errors = r.errors;
  return json(row);
}

}  // namespace

std::string imported_result_text(const std::vector<ImportedInput>& inputs, const ImportContext& ctx) {
  if (inputs.empty()) throw Error("nothing to import");
  for (const auto& in : inputs)
    if (in.backend != inputs.front().backend)
      throw Error(fmt::format("{} ran on {}, {} on {}: a result file holds one backend; import them separately", terminal_safe(inputs.front().file),
                              inputs.front().backend, terminal_safe(in.file), in.backend));
  const auto world = world_of(inputs);

  std::vector<std::string> lines;
  std::vector<std::string> benchmarks;
  std::set<int> counts;
  json point_list = json::array();
  std::map<std::string, std::size_t> points;  // benchmark|params -> its index in point_list
  std::map<std::string, std::pair<std::size_t, int>> keys;  // row key -> (input, line)
  std::size_t n_status[4] = {0, 0, 0, 0};
  json imported = json::array();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& in = inputs[i];
    const std::string peak_reason = fmt::format("not in the input: {} prints no expected peak", in.tool);
    for (const auto& r : in.rows) {
      const json row = row_json(r, world, peak_reason, i);
      const std::string key = fmt::format("{}|{}|{}", r.benchmark, r.params.dump(), r.ranks.size());
      if (auto [it, fresh] = keys.emplace(key, std::make_pair(i, r.line)); !fresh)
        throw Error(fmt::format("{}:{}: the same {} row as {}:{} (params {}): import one of them", terminal_safe(in.file), r.line, r.benchmark,
                                terminal_safe(inputs[it->second.first].file), it->second.second, terminal_quote(r.params.dump(), 120)));
      if (std::find(benchmarks.begin(), benchmarks.end(), r.benchmark) == benchmarks.end()) benchmarks.push_back(r.benchmark);
      if (points.emplace(fmt::format("{}|{}", r.benchmark, r.params.dump()), point_list.size()).second)
        point_list.push_back({{"benchmark", r.benchmark}, {"params", r.params}});
      counts.insert(static_cast<int>(r.ranks.size()));
      ++n_status[static_cast<int>(r.status)];
      lines.push_back(result_row_line(row));
    }
    json argv = nullptr;
    if (in.command_line) {
      argv = json::array();
      for (const auto& a : *in.command_line) argv.push_back(utf8_escaped(a));
    }
    std::vector<std::string> missing, notes;
    for (const auto& m : in.missing) missing.push_back(utf8_escaped(m));
    for (const auto& n : in.notes) notes.push_back(utf8_escaped(n));
    imported.push_back({{"file", utf8_escaped(in.file)},
                        {"format", in.format},
                        {"tool", in.tool},
                        {"tool_version", optional_text(in.tool_version)},
                        {"command_line", argv},
                        {"command_line_note", in.command_line ? "" : utf8_escaped(in.command_line_note)},
                        {"started", optional_text(in.started)},
                        {"rows", in.rows.size()},
                        {"missing", missing},
                        {"notes", notes}});
  }
  if (lines.empty()) throw Error("the inputs hold no row gpuscale can import");

  json hosts = json::array(), ranks = json::array();
  std::map<std::string, std::size_t> host_index;
  for (const auto& r : world) {
    const auto h = host_of(r);
    auto [it, fresh] = host_index.emplace(h, hosts.size());
    if (fresh) hosts.push_back({{"name", h}, {"node_index", hosts.size()}, {"cpu_model", ""}, {"ranks", json::array()}});
    json& host = hosts[it->second];
    const std::size_t local = host["ranks"].size();
    host["ranks"].push_back(r.rank);
    json rank = {{"rank", r.rank},
                 {"host", h},
                 {"local_rank", local},
                 {"device",
                  {{"backend", inputs.front().backend},
                   {"name", utf8_escaped(r.device_name)},
                   {"index", r.device},
                   {"memory_bytes", nullptr},
                   {"free_memory_bytes", nullptr},
                   {"details", r.pci_bus_id.empty() ? json::object() : json{{"pci_bus_id", utf8_escaped(r.pci_bus_id)}}}}}};
    if (r.pid) rank["pid"] = *r.pid;
    ranks.push_back(std::move(rank));
  }
  json software = {{"driver", nullptr}, {"cuda_runtime", nullptr}, {"nccl", nullptr}};
  for (const auto& in : inputs)
    for (const auto& [k, v] : in.software.items())
      if (software[k].is_null()) software[k] = v;
  const std::string no_peak = "not in the input: an imported file has no link peak";
  const std::size_t n_rows = lines.size();
  const bool valid = n_status[static_cast<int>(RowStatus::invalid)] == 0 && n_status[static_cast<int>(RowStatus::failed)] == 0;
  const std::string cluster = !ctx.cluster.empty() ? ctx.cluster : host_of(world.front());
  json header = {{"schema", kResultSchemaName},
                 {"schema_version", kResultSchemaVersion},
                 {"tool", {{"name", "gpuscale"}, {"version", ctx.tool_version}, {"commit", ctx.tool_commit}}},
                 {"created_utc", ctx.now_utc},
                 {"finished_utc", ctx.now_utc},
                 {"cluster", {{"name", utf8_escaped(cluster)}, {"source", ctx.cluster.empty() ? "import" : "--cluster"}}},
                 {"backend", inputs.front().backend},
                 {"command_line", ctx.command_line},
                 {"environment", json::object()},
                 {"test_fault", nullptr},
                 {"slurm", nullptr},
                 {"mpi", {{"library", "not recorded: an imported file"}, {"world_size", world.size()}}},
                 {"software", software},
                 {"hosts", hosts},
                 {"ranks", ranks},
                 {"links", {{"intra_node", {{"value", nullptr}, {"source", no_peak}}}, {"inter_node", {{"value", nullptr}, {"source", no_peak}}}}},
                 {"plan",
                  {{"gpu_counts", std::vector<int>(counts.begin(), counts.end())},
                   {"benchmarks", benchmarks},
                   {"points", point_list.size()},
                   {"seed", nullptr},
                   {"options", json::object()},
                   {"point_list", point_list}}},
                 {"results", json::array()},
                 {"summary",
                  {{"complete", true},
                   {"valid", valid},
                   {"rows", n_rows},
                   {"ok", n_status[static_cast<int>(RowStatus::ok)]},
                   {"invalid", n_status[static_cast<int>(RowStatus::invalid)]},
                   {"failed", n_status[static_cast<int>(RowStatus::failed)]},
                   {"skipped", n_status[static_cast<int>(RowStatus::skipped)]},
                   {"exit_code", nullptr},
                   {"interrupted", nullptr}}},
                 {"imported", {{"inputs", imported}}}};
  const std::string text = result_document_text(header, lines);
  // Read back as every reader reads it: a file validate would refuse is never written.
  try {
    json doc = parse_result_text(text, "the imported result");
    ResultChecker checker;
    for (std::size_t i = 0; i < doc.at("results").size(); ++i) checker.row(doc["results"][i], result_row_from_v2(doc["results"][i]), i);
    doc.erase("results");
    if (const auto report = checker.finish(doc); !report.empty())
      throw Error(refusal_line(report, "the imported result"));
  } catch (const Error& e) {
    throw Error(fmt::format("internal error: {}", e.what()), kExitInvalidResult);
  }
  return text;
}

}  // namespace gpuscale
