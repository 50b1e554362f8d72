// The collective rows in nccl-tests' -J JSON layout (nccl-tests 2.19.6: src/util.cu, JSON_FILE_VERSION
// 3), per-iteration data included as its -I writes it, so that NVIDIA's tools/analyze_perf_json.py reads
// a gpuscale run unchanged (docs/usage.md). One nccl-tests run is one process per GPU over the whole
// job: the export takes the rows of the largest GPU count, each collective's lines (type, redop, root,
// size) with out-of-place and in-place side by side (analysis/nccl_table.h). Where gpuscale differs:
// a figure the row lacks (a bandwidth at one rank, a placement not measured, a warm-up count the run
// did not record) is null rather than a made-up number; `env` is empty (the result file keeps only
// allow-listed variables, not the process environment); `results` may hold several collectives, each
// line naming its own in experiment_name.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "analysis/nccl_table.h"
#include "analysis/reporter.h"
#include "analysis/result_set.h"
#include "core/error.h"
#include "core/iter_stats.h"
#include "results/row_fields.h"

namespace gpuscale {
namespace {

using ojson = nlohmann::ordered_json;

ojson figure(const ResultRow& r, const RowField& f) {
  const auto v = number_field(r, f);
  return v ? ojson(*v) : ojson(nullptr);
}

// A count (nccl-tests writes its wrong values as an integer); null when the row has none.
ojson count_figure(const ResultRow& r, const RowField& f) {
  const auto v = number_field(r, f);
  return v ? ojson(static_cast<std::int64_t>(std::llround(*v))) : ojson(nullptr);
}

// "2026-12-07T22:54:39Z" as nccl-tests' start_time writes its time: "2026-12-07 22:54:39".
ojson nccl_time(const nlohmann::json& doc, const char* key) {
  if (!doc.contains(key) || !doc[key].is_string()) return nullptr;
  std::string t = doc[key].get<std::string>();
  std::replace(t.begin(), t.end(), 'T', ' ');
  if (!t.empty() && t.back() == 'Z') t.pop_back();
  return t;
}

// nccl-tests' writeBenchmarkLineBody: time (us), alg_bw, bus_bw (GB/s), nwrong.
ojson body(const ResultRow* r) {
  if (!r) return nullptr;
  return {{"time", figure(*r, fields::time_us)}, {"alg_bw", figure(*r, fields::algbw)},
          {"bus_bw", figure(*r, fields::busbw)}, {"nwrong", count_figure(*r, fields::wrong)}};
}

// nccl-tests' writePerIterReport, from the row's -I pass; nullptr for a row without one.
ojson per_iteration(const ResultRow* r) {
  if (!r) return nullptr;
  const auto times = field_json(*r, fields::iter_times_us);
  if (!times.is_array() || times.empty()) return nullptr;
  const auto series = times.get<std::vector<double>>();
  const auto skip = static_cast<std::size_t>(number_field(*r, fields::iter_skipped).value_or(0));
  const auto st = iter_stats(series, skip);
  if (!st) return nullptr;
  ojson j = {{"skipped_iterations", skip}, {"min_us", st->min}, {"max_us", st->max}, {"avg_us", st->avg},
             {"p50_us", st->p50},          {"p95_us", st->p95}, {"p99_us", st->p99}, {"stdev_us", st->stdev},
             {"cv_pct", st->cv_pct},       {"times_us", series}};
  const auto per_rank = field_json(*r, fields::iter_rank_times_us);
  if (per_rank.is_array() && per_rank.size() > 1) j["per_process_max_times_us"] = per_rank;
  return j;
}

// NCCL_VERSION_CODE of "2.27.3" (2.9 on: major*10000 + minor*100 + patch); null without NCCL.
ojson nccl_version_code(const std::vector<NcclTable>& tables) {
  for (const auto& t : tables)
    for (const auto& l : t.lines)
      for (const ResultRow* r : {l.out_of_place, l.in_place}) {
        if (!r || !r->metrics.contains("nccl_version") || !r->metrics["nccl_version"].is_string()) continue;
        int major = 0, minor = 0, patch = 0;
        if (std::sscanf(r->metrics["nccl_version"].get<std::string>().c_str(), "%d.%d.%d", &major, &minor, &patch) == 3)
          return major * 10000 + minor * 100 + patch;
      }
  return nullptr;
}

// nccl-tests' config object, the devices inside it (writeDeviceReport), one per rank of the rows.
ojson config(const nlohmann::json& doc, const std::vector<NcclTable>& tables, const ResultRow* first) {
  std::vector<std::uint64_t> sizes;
  for (const auto& t : tables)
    for (const auto& l : t.lines)
      if (const ResultRow* r = l.out_of_place ? l.out_of_place : l.in_place)
        sizes.push_back(static_cast<std::uint64_t>(number_field(*r, fields::size_bytes).value_or(0)));
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  const auto& options = doc.contains("plan") && doc["plan"].contains("options") ? doc["plan"]["options"] : nlohmann::json();
  auto option = [&](const char* key) -> ojson {
    if (!options.is_object() || !options.contains(key) || options[key].is_null()) return nullptr;
    return ojson::parse(options[key].dump());
  };
  ojson c = {{"nthreads", 1}, {"ngpus", 1},
             {"minimum_bytes", sizes.empty() ? 0 : sizes.front()}, {"maximum_bytes", sizes.empty() ? 0 : sizes.back()}};
  if (options.is_object() && options.contains("step_bytes") && !options["step_bytes"].is_null())
    c["step_bytes"] = option("step_bytes");
  else
    c["step_factor"] = option("step_factor");
  c["warmup_iters"] = option("warmup");
  const nlohmann::json none = nlohmann::json::object();
  const nlohmann::json& m = first ? first->metrics : none;
  c["iterations"] = m.contains("iters") ? ojson::parse(m["iters"].dump()) : ojson(nullptr);
  c["aggregated_iterations"] = 1;
  c["validation"] = 1;
  c["graph"] = 0;
  c["blocking_collectives"] = true;  // the -I pass waits for each operation (nccl-tests' -z 3)
  c["per_iter_timing"] = m.contains("iter_times_us");
  c["per_iter_skip"] = m.value("iter_skipped", 0);
  c["parallel_init"] = false;
  ojson devices = ojson::array();
  for (const auto& v : first ? first->ranks : std::vector<RankValue>{}) {
    const nlohmann::json* id = rank_identity(doc, v.rank, v.host);
    const bool known = id && id->contains("device") && (*id)["device"].is_object();
    devices.push_back({{"rank", v.rank},
                       {"group", 0},
                       {"pid", id && id->contains("pid") ? ojson::parse((*id)["pid"].dump()) : ojson(nullptr)},
                       {"hostname", v.host},
                       {"device", v.device_index},
                       {"device_hex", device_detail(id, "pci_bus_id")},
                       {"device_info", known ? (*id)["device"].value("name", std::string()) : std::string()}});
  }
  c["devices"] = std::move(devices);
  return c;
}

// One run's document; a run without collective rows (or no run) has an empty results list, as an
// nccl-tests run that measured nothing.
std::string nccl_tests_json(const LoadedResult* run) {
  auto tables = run ? nccl_tables(run->rows) : std::vector<NcclTable>{};
  int largest = 0;
  for (const auto& t : tables) largest = std::max(largest, t.gpu_count);
  std::erase_if(tables, [&](const NcclTable& t) { return t.gpu_count != largest || t.lines.empty(); });
  const ResultRow* first = nullptr;
  if (!tables.empty()) {
    const NcclLine& l0 = tables.front().lines.front();
    first = l0.out_of_place ? l0.out_of_place : l0.in_place;
  }
  const nlohmann::json& meta = run ? run->doc : nlohmann::json::object();
  ojson results = ojson::array();
  double wrong = 0;
  for (const auto& t : tables)
    for (const auto& l : t.lines) {
      const ResultRow& r = l.out_of_place ? *l.out_of_place : *l.in_place;
      const auto p = nccl_point(r);
      if (!p) continue;
      for (const ResultRow* x : {l.out_of_place, l.in_place})
        if (x) wrong += number_field(*x, fields::wrong).value_or(0);
      ojson line = {{"size", static_cast<std::uint64_t>(number_field(r, fields::size_bytes).value_or(0))},
                    {"count", static_cast<std::uint64_t>(number_field(r, fields::count).value_or(0))},
                    {"type", p->type},
                    {"redop", p->redop},
                    {"root", fmt::format("{:>6}", p->root)},
                    {"out_of_place", body(l.out_of_place)}};
      if (auto j = per_iteration(l.out_of_place); !j.is_null()) line["out_of_place_per_iter"] = std::move(j);
      line["in_place"] = body(l.in_place);
      if (auto j = per_iteration(l.in_place); !j.is_null()) line["in_place_per_iter"] = std::move(j);
      line["actual_iterations"] = r.metrics.value("iters", 0);
      line["experiment_name"] = t.nccl_tests;
      results.push_back(std::move(line));
    }
  std::optional<double> avg;  // nccl-tests' "Avg bus bandwidth": over the first collective's table
  if (!tables.empty()) avg = nccl_average(tables.front()).busbw;
  ojson doc = {{"version", 3},
               {"start_time", nccl_time(meta, "created_utc")},
               {"args", ojson::parse(meta.value("command_line", nlohmann::json::array()).dump())},
               {"env", ojson::array()},
               {"nccl_version", nccl_version_code(tables)},
               {"config", config(meta, tables, first)},
               {"results", std::move(results)},
               {"out_of_bounds", {{"count", static_cast<std::int64_t>(std::llround(wrong))}, {"okay", wrong == 0}}},
               {"average_bus_bandwidth", {{"bandwidth", avg ? ojson(*avg) : ojson(nullptr)}, {"okay", "unchecked"}}},
               {"errors", ojson::array()},
               {"end_time", nccl_time(meta, "finished_utc")}};
  return doc.dump(2) + "\n";
}

class NcclTestsJsonReporter final : public Reporter {
 public:
  std::string_view flag() const override { return "--nccl-tests-json"; }
  std::string_view help() const override {
    return "write the collective rows of the largest GPU count in nccl-tests' -J JSON layout, per-iteration data "
           "included (for NVIDIA's analyze_perf_json.py)";
  }
  bool may_write_stdout() const override { return true; }
  std::string render(const std::vector<FileReport>& files, const ReportExtras&) const override {
    if (files.size() > 1)
      throw Error(fmt::format("--nccl-tests-json writes one run, as nccl-tests does: give one result file, not {}",
                              files.size()));
    return nccl_tests_json(files.empty() ? nullptr : &files.front().run);
  }
};

}  // namespace

const Reporter& nccl_tests_json_format() {
  static const NcclTestsJsonReporter format;
  return format;
}

}  // namespace gpuscale
