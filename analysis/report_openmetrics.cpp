// The report as Prometheus text exposition format 0.0.4, the format node_exporter's textfile collector
// reads (*.prom files): gauges with HELP and TYPE, no timestamps (the collector rejects them), no
// "# EOF" (OpenMetrics-only). docs/analysis.md lists every metric and label.
#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/escape.h"
#include "analysis/report.h"
#include "core/error.h"

namespace gpuscale {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

// A metric family's sample lines as written, and which input gave each series (by a 128-bit digest of
// the series text: a report of 4,096 ranks x 1,000 rows has millions of series, and keeping their text
// twice, or their labels, took gigabytes).
struct Family {
  const char* name;
  const char* help;
  std::string lines;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> seen;  // digest -> input index
};

std::pair<std::uint64_t, std::uint64_t> digest(const std::string& text) {
  std::uint64_t fnv = 1469598103934665603ULL;
  for (unsigned char c : text) fnv = (fnv ^ c) * 1099511628211ULL;
  return {std::hash<std::string>{}(text), fnv};
}

// Label names must match [a-zA-Z_][a-zA-Z0-9_]*; params that clash with the row's own labels get "param_".
std::string label_name(const std::string& key) {
  static const std::set<std::string> reserved{"cluster", "benchmark", "gpu_count", "topology", "unit", "rank", "host", "gpu"};
  std::string out;
  for (char c : key) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])) || out.rfind("__", 0) == 0 || reserved.count(out))
    out = "param_" + out;
  return out;
}

Labels row_labels(const LoadedResult& run, const ResultRow& r) {
  Labels l{{"cluster", run.cluster}, {"benchmark", r.benchmark}, {"gpu_count", std::to_string(r.gpu_count)},
           {"topology", r.topology}};
  for (const auto& [k, v] : r.params.items()) l.emplace_back(label_name(k), v.is_string() ? v.get<std::string>() : v.dump());
  return l;
}

Labels with(Labels l, std::initializer_list<std::pair<std::string, std::string>> more) {
  for (const auto& m : more) l.push_back(m);
  return l;
}

std::string series(const char* name, const Labels& labels) {
  std::string out = name;
  out += '{';
  for (std::size_t i = 0; i < labels.size(); ++i)
    out += fmt::format("{}{}=\"{}\"", i ? "," : "", labels[i].first, prom_label_value(labels[i].second));
  return out + '}';
}

std::optional<double> epoch_seconds(const std::string& utc) {
  std::tm tm{};
  if (!::strptime(utc.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return std::nullopt;
  return static_cast<double>(::timegm(&tm));
}

}  // namespace

std::string report_openmetrics(const std::vector<FileReport>& files) {
  std::vector<Family> fam{
      {"gpuscale_run_info", "A gpuscale run: cluster, backend, tool version and commit, device model (value 1)", {}, {}},
      {"gpuscale_run_timestamp_seconds", "Start of the run (Unix time)", {}, {}},
      {"gpuscale_run_valid", "1 when every measurement of the run was valid, else 0", {}, {}},
      {"gpuscale_throughput", "Aggregate throughput of a (benchmark, params, gpu_count) point, in the unit label", {}, {}},
      {"gpuscale_scaling_efficiency", "Scaling efficiency of the point (fraction; docs/results.md)", {}, {}},
      {"gpuscale_fraction_of_peak", "Throughput as a fraction of the expected peak", {}, {}},
      {"gpuscale_valid", "1 when the point's measurement was verified correct, 0 when invalid or failed", {}, {}},
      {"gpuscale_rank_throughput", "One rank's throughput (independent work), median over repetitions", {}, {}},
      {"gpuscale_straggler_deficit", "A straggler rank's shortfall below the median of its point (fraction)", {}, {}}};
  std::size_t input = 0;  // index of the file being added, into `files`
  auto add = [&](std::size_t i, const FileReport&, const Labels& l, double v) {
    Family& fm = fam[i];
    const auto s = series(fm.name, l);
    if (auto [it, fresh] = fm.seen.emplace(digest(s), input); !fresh)
      throw Error(fmt::format("{}: gives the same Prometheus series of {} as {}: export one run per cluster",
                              files[input].run.path, fm.name, files[it->second].run.path));
    fm.lines += fmt::format("{} {}\n", s, v);
  };
  for (const auto& f : files) {
    input = static_cast<std::size_t>(&f - files.data());
    const auto& d = f.run.doc;
    std::string models;
    for (const auto& m : f.run.device_models) models += (models.empty() ? "" : "; ") + m;
    add(0, f,
        {{"cluster", f.run.cluster}, {"backend", d["backend"].get<std::string>()},
         {"version", d["tool"]["version"].get<std::string>()}, {"commit", d["tool"]["commit"].get<std::string>()},
         {"device", models}},
        1);
    if (auto t = epoch_seconds(d["created_utc"].get<std::string>())) add(1, f, {{"cluster", f.run.cluster}}, *t);
    add(2, f, {{"cluster", f.run.cluster}}, d["summary"]["valid"].get<bool>() ? 1 : 0);
    for (const auto& r : f.run.rows) {
      if (r.status == RowStatus::skipped) continue;
      const Labels l = row_labels(f.run, r);
      if (r.aggregate) add(3, f, with(l, {{"unit", r.unit}}), *r.aggregate);
      if (r.scaling_efficiency) add(4, f, l, *r.scaling_efficiency);
      if (r.fraction_of_peak) add(5, f, l, *r.fraction_of_peak);
      add(6, f, l, r.status == RowStatus::ok ? 1 : 0);
      if (r.scope == "independent")
        for (const auto& rv : r.ranks)
          if (rv.value)
            add(7, f, with(l, {{"unit", r.unit}, {"rank", std::to_string(rv.rank)}, {"host", rv.host}, {"gpu", std::to_string(rv.device_index)}}),
                *rv.value);
    }
    for (const auto& s : f.stragglers)
      add(8, f, with(row_labels(f.run, *s.row), {{"rank", std::to_string(s.rank)}, {"host", s.host}, {"gpu", std::to_string(s.device_index)}}),
          s.deficit);
  }
  std::string out;
  for (auto& fm : fam) {
    if (fm.lines.empty()) continue;
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", fm.name, fm.help, fm.name);
    out += fm.lines;
    std::string().swap(fm.lines);  // each line is held once more at most
  }
  return out;
}

}  // namespace gpuscale
