// The report as OpenMetrics text (gauges with HELP and TYPE, ending "# EOF") that is also Prometheus text
// format 0.0.4, which node_exporter's textfile collector reads (*.prom files; "# EOF" is a comment
// there): no timestamps (the collector rejects them). Each metric's name carries its base unit (bytes
// per second, FLOP/s, samples/s, ratios), one family per kind; every series names its run (run_id), so
// several runs of one cluster export side by side. docs/analysis.md lists every metric and label.
#include <cstdint>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/reporter.h"
#include "analysis/row_text.h"
#include "core/error.h"
#include "core/utc_time.h"
#include "results/row_fields.h"

namespace gpuscale {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

// A metric family's sample lines as written, and which input gave each series (by a 128-bit digest of
// the series text: a report of 4,096 ranks x 1,000 rows has millions of series, and keeping their text
// twice, or their labels, took gigabytes).
struct Family {
  std::string name;
  std::string help;
  std::string lines;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> seen;  // digest -> input index
};

std::pair<std::uint64_t, std::uint64_t> digest(const std::string& text) {
  std::uint64_t fnv = 1469598103934665603ULL;
  for (unsigned char c : text) fnv = (fnv ^ c) * 1099511628211ULL;
  return {std::hash<std::string>{}(text), fnv};
}

// Label names must match [a-zA-Z_][a-zA-Z0-9_]* (names starting "__" are Prometheus's own). A
// parameter's key becomes one: other characters as '_', long keys cut, "param_" before a key that
// clashes with the row's own labels or does not start as a name must.
std::string label_name(const std::string& key) {
  static const std::set<std::string> reserved{"cluster", "run", "benchmark", "gpu_count", "topology", "unit",
                                              "rank",    "host", "gpu",      "untrusted", "member"};
  constexpr std::size_t kMaxLabelName = 100;
  std::string out;
  for (char c : key.substr(0, kMaxLabelName)) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (key.size() > kMaxLabelName) out += "_cut";
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])) || out.rfind("__", 0) == 0 || reserved.count(out))
    out = "param_" + out;
  return out;
}

// The labels every series of a row may carry besides its params (device() adds rank, host and gpu).
const std::set<std::string>& fixed_label_names() {
  static const std::set<std::string> names{"cluster", "run",       "benchmark", "gpu_count", "topology",
                                           "rank",    "host",      "gpu",       "untrusted", "member"};
  return names;
}

// The run's label: its run_id, or (files older than run_id) its start time.
std::string run_label(const LoadedResult& run) {
  const auto& id = run.doc.contains("run_id") ? run.doc["run_id"] : nlohmann::json();
  return id.is_string() ? id.get<std::string>() : run.doc.value("created_utc", std::string());
}

Labels row_labels(const LoadedResult& run, const ResultRow& r) {
  Labels l{{"cluster", run.cluster}, {"run", run_label(run)}, {"benchmark", r.benchmark}, {"gpu_count", std::to_string(r.gpu_count)},
           {"topology", r.topology}};
  // --lenient: a row of a file that contradicts itself there is marked on every series it has.
  if (untrusted_reason(r)) l.emplace_back("untrusted", "true");
  // Two keys may give one name ("a-b" and "a_b"; "cluster" and "param_cluster"): a label twice in a
  // series is invalid, so a later one (keys in sorted order) takes the first free "_2", "_3", ...
  std::set<std::string> used = fixed_label_names();
  for (const auto& [k, v] : r.params.items()) {
    std::string name = label_name(k);
    for (int n = 2; used.count(name); ++n) name = label_name(k) + "_" + std::to_string(n);
    used.insert(name);
    l.emplace_back(std::move(name), v.is_string() ? v.get<std::string>() : v.dump());
  }
  return l;
}


std::string series(const char* name, const Labels& labels) {
  std::string out = name;
  out += '{';
  for (std::size_t i = 0; i < labels.size(); ++i)
    out += fmt::format("{}{}=\"{}\"", i ? "," : "", labels[i].first, prom_label_value(labels[i].second));
  return out + '}';
}

// A throughput unit as its family's name part and the factor to the base unit: "GB/s" is
// bandwidth_bytes_per_second x 1e9. A unit not listed keeps its own name ("/" read as "per") and value.
struct BaseUnit {
  std::string name;
  double factor;
};
BaseUnit base_unit(const std::string& unit) {
  static const std::map<std::string, BaseUnit> known{
      {"B/s", {"bandwidth_bytes_per_second", 1}},       {"KB/s", {"bandwidth_bytes_per_second", 1e3}},
      {"MB/s", {"bandwidth_bytes_per_second", 1e6}},    {"GB/s", {"bandwidth_bytes_per_second", 1e9}},
      {"TB/s", {"bandwidth_bytes_per_second", 1e12}},   {"FLOP/s", {"flops_per_second", 1}},
      {"GFLOP/s", {"flops_per_second", 1e9}},           {"TFLOP/s", {"flops_per_second", 1e12}},
      {"PFLOP/s", {"flops_per_second", 1e15}},          {"samples/s", {"samples_per_second", 1}}};
  if (auto it = known.find(unit); it != known.end()) return it->second;
  std::string name;
  for (char c : unit.substr(0, 64))  // a family name, not a copy of whatever the file says
    if (c == '/') name += "_per_";
    else name += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : '_';
  return {name.empty() ? "value" : name, 1};
}

// analysis.power's entries (analysis/fleet_outliers.h) as series of their rows' labels and the member
// ("GPU", "node pair", "node's rail 1"); an entry whose row is not in the file is left out.
void add_power(const LoadedResult& run, const std::function<void(const Labels&, double)>& add) {
  const auto& analysis = run.doc.contains("analysis") ? run.doc["analysis"] : nlohmann::json();
  if (!analysis.is_object() || !analysis.contains("power") || !analysis["power"].is_array()) return;
  for (const auto& e : analysis["power"]) {
    if (!e.is_object() || !e.contains("detectable") || !e["detectable"].is_number()) continue;
    const auto row = std::find_if(run.rows.begin(), run.rows.end(), [&](const ResultRow& r) {
      return r.benchmark == e.value("benchmark", std::string()) && r.gpu_count == e.value("gpu_count", -1) &&
             e.contains("params") && r.params == e["params"];
    });
    if (row == run.rows.end()) continue;
    auto l = row_labels(run, *row);
    std::string member = e.value("members", std::string());
    if (e.contains("rail") && e["rail"].is_number_integer()) member += " " + std::to_string(e["rail"].get<int>());
    l.emplace_back("member", member);
    if (e.contains("host") && e["host"].is_string()) l.emplace_back("host", e["host"].get<std::string>());
    add(l, e["detectable"].get<double>());
  }
}

// Throws gpuscale::Error when two inputs would give the same series (e.g. two runs of one cluster).
std::string report_openmetrics(const std::vector<FileReport>& files) {
  // In output order; the throughput families (one per base unit) are made as their units appear.
  enum Fixed { run_info, run_timestamp, run_valid, valid, straggler, detectable };
  std::vector<Family> fam{
      {"gpuscale_run_info", "A gpuscale run: cluster, run id, backend, tool version and commit, device model (value 1)", {}, {}},
      {"gpuscale_run_timestamp_seconds", "Start of the run (Unix time)", {}, {}},
      {"gpuscale_run_valid", "1 when every measurement of the run was valid, else 0", {}, {}},
      {"gpuscale_valid", "1 when the point's measurement was verified correct, 0 when invalid or failed", {}, {}},
      {"gpuscale_straggler_deficit_ratio", "A straggler rank's shortfall below the median of its point (fraction)", {}, {}},
      {"gpuscale_detectable_slowdown_ratio",
       "The smallest slowdown of one member (label member) the outlier rule names with 95% probability, from the run's "
       "own noise (analysis.power; over 0.4: no useful bar)",
       {},
       {}}};
  // A gauge per row field with an OpenMetrics family (results/row_fields.h), in the table's order.
  std::vector<std::pair<const RowField*, Family>> field_families;
  for (const auto& f : row_fields())
    if (!f.openmetrics.empty()) field_families.push_back({&f, Family{std::string(f.openmetrics), std::string(f.meaning), {}, {}}});
  std::map<std::string, Family> aggregate, per_rank;  // by family name
  std::size_t input = 0;  // index of the file being added, into `files`
  auto add = [&](Family& fm, const Labels& l, double v) {
    // A finite figure that overflows in base units (DBL_MAX GB/s is inf bytes/s) would be exported as +Inf.
    if (!std::isfinite(v))
      throw Error(fmt::format("{}: a figure of {} does not fit a double in base units (it would be exported as "
                              "infinite)", term_text(files[input].run.path), fm.name));
    const auto s = series(fm.name.c_str(), l);
    if (auto [it, fresh] = fm.seen.emplace(digest(s), input); !fresh)
      throw Error(fmt::format("{}: gives the same Prometheus series of {} as {}: the same run twice", files[input].run.path,
                              fm.name, files[it->second].run.path));
    fm.lines += fmt::format("{} {}\n", s, v);
  };
  auto unit_family = [](std::map<std::string, Family>& in, const std::string& prefix, const std::string& what,
                        const BaseUnit& u) -> Family& {
    const std::string name = prefix + u.name;
    auto it = in.find(name);
    std::string in_words = u.name;
    std::replace(in_words.begin(), in_words.end(), '_', ' ');
    if (it == in.end()) it = in.emplace(name, Family{name, what + ", in " + in_words, {}, {}}).first;
    return it->second;
  };
  for (const auto& f : files) {
    input = static_cast<std::size_t>(&f - files.data());
    const auto& d = f.run.doc;
    const std::string run = run_label(f.run), backend = d["backend"].get<std::string>();
    std::string models;
    for (const auto& m : f.run.device_models) models += (models.empty() ? "" : "; ") + m;
    add(fam[run_info],
        {{"cluster", f.run.cluster}, {"run", run}, {"backend", backend}, {"version", d["tool"]["version"].get<std::string>()},
         {"commit", d["tool"]["commit"].get<std::string>()}, {"device", models}},
        1);
    if (auto t = utc_epoch_seconds(d["created_utc"].get<std::string>())) add(fam[run_timestamp], {{"cluster", f.run.cluster}, {"run", run}}, *t);
    add(fam[run_valid], {{"cluster", f.run.cluster}, {"run", run}}, d["summary"]["valid"].get<bool>() ? 1 : 0);
    // Which device a rank measured on: a GPU's index on a GPU backend; a CPU rank is its rank.
    auto device = [&](Labels l, int rank, const std::string& host, int index) {
      l.insert(l.end(), {{"rank", std::to_string(rank)}, {"host", host}});
      if (backend != "cpu") l.emplace_back("gpu", std::to_string(index));
      return l;
    };
    for (const auto& r : f.run.rows) {
      if (r.status == RowStatus::skipped) continue;
      const Labels l = row_labels(f.run, r);
      const BaseUnit u = base_unit(r.unit);
      if (r.aggregate)
        add(unit_family(aggregate, "gpuscale_", "Aggregate throughput of a (benchmark, params, gpu_count) point", u), l,
            *r.aggregate * u.factor);
      for (auto& [field, fm] : field_families)
        if (const auto v = number_field(r, *field)) add(fm, l, *v);
      add(fam[valid], l, r.status == RowStatus::ok ? 1 : 0);
      if (r.scope == "independent")
        for (const auto& rv : r.ranks)
          if (rv.value)
            add(unit_family(per_rank, "gpuscale_rank_", "One rank's throughput (independent work), median over repetitions", u),
                device(l, rv.rank, rv.host, rv.device_index), *rv.value * u.factor);
    }
    for (const auto& s : f.stragglers)
      add(fam[straggler], device(row_labels(f.run, *s.row), s.rank, s.host, s.device_index), s.deficit);
    add_power(f.run, [&](const Labels& l, double v) { add(fam[detectable], l, v); });
  }
  std::string out;
  auto write = [&](Family& fm) {
    if (fm.lines.empty()) return;
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", fm.name, fm.help, fm.name);
    out += fm.lines;
    std::string().swap(fm.lines);  // each line is held once more at most
  };
  for (int i : {run_info, run_timestamp, run_valid}) write(fam[i]);
  for (auto& [name, fm] : aggregate) write(fm);
  for (auto& [field, fm] : field_families) write(fm);
  write(fam[valid]);
  for (auto& [name, fm] : per_rank) write(fm);
  write(fam[straggler]);
  write(fam[detectable]);
  return out + "# EOF\n";
}

// Gauges of the rows and the runs: the files' sections and the extras (prose) have no place in it.
class OpenMetricsReporter final : public Reporter {
 public:
  std::string_view flag() const override { return "--openmetrics"; }
  std::string_view help() const override { return "write Prometheus text format for node_exporter's textfile collector"; }
  bool may_write_stdout() const override { return true; }
  std::string render(const std::vector<FileReport>& files, const ReportExtras&) const override {
    return report_openmetrics(files);
  }
};

}  // namespace

const Reporter& openmetrics_format() {
  static const OpenMetricsReporter openmetrics;
  return openmetrics;
}

}  // namespace gpuscale
