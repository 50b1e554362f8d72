// The report as Prometheus text exposition format 0.0.4, the format node_exporter's textfile collector
// reads (*.prom files): gauges with HELP and TYPE, no timestamps (the collector rejects them), no
// "# EOF" (OpenMetrics-only). docs/analysis.md lists every metric and label.
#include <ctime>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/escape.h"
#include "analysis/report.h"
#include "core/error.h"

namespace gpuscale {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

struct Family {
  const char* name;
  const char* help;
  std::vector<std::pair<Labels, double>> samples;
  std::vector<std::string> origin;  // the input file of each sample (for duplicate messages)
};

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
  auto add = [&](std::size_t i, const FileReport& f, Labels l, double v) {
    fam[i].samples.emplace_back(std::move(l), v);
    fam[i].origin.push_back(f.run.path);
  };
  for (const auto& f : files) {
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
  for (const auto& fm : fam) {
    if (fm.samples.empty()) continue;
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", fm.name, fm.help, fm.name);
    std::map<std::string, std::string> seen;
    for (std::size_t i = 0; i < fm.samples.size(); ++i) {
      const auto s = series(fm.name, fm.samples[i].first);
      if (auto [it, fresh] = seen.emplace(s, fm.origin[i]); !fresh)
        throw Error(fmt::format("{}: gives the same Prometheus series of {} as {}: export one run per cluster",
                                fm.origin[i], fm.name, it->second));
      out += fmt::format("{} {}\n", s, fm.samples[i].second);
    }
  }
  return out;
}

}  // namespace gpuscale
