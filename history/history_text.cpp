// The history's text, JSON and CSV (history_text.h).
#include "history/history_text.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "text/escape.h"
#include "text/number_text.h"
#include "results/row_fields.h"

namespace gpuscale::history {
namespace {

std::string short_id(const std::string& id) { return id.substr(0, 12); }

// Terminal text from the store (cluster and host names come from result files: untrusted).
std::string t(const std::string& s) { return term_text(s); }

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

nlohmann::json band_json(const NoiseBand& b) { return {{"down", b.down}, {"up", b.up}, {"reps", b.reps}}; }

nlohmann::json key_json(const SeriesKey& k, const std::string& unit) {
  return {{"cluster", k.cluster}, {"benchmark", k.benchmark}, {"params", nlohmann::json::parse(k.params, nullptr, false)},
          {"gpu_count", k.gpu_count}, {"host", k.host.empty() ? nlohmann::json(nullptr) : nlohmann::json(k.host)},
          {"gpu", k.gpu.empty() ? nlohmann::json(nullptr) : nlohmann::json(k.gpu)}, {"unit", unit},
          {"label", series_label(k)}};
}

std::string percent(double ratio) { return fmt::format("{:+.0f}%", (ratio - 1) * 100); }

}  // namespace

std::string runs_text(const std::vector<RunSummary>& runs) {
  std::string out = fmt::format("{:<12}  {:<20}  {:<16}  {:>5}  {:>5}  {:<10}  {}\n", "run", "created (UTC)", "cluster",
                                "hosts", "rows", "slurm job", "gpuscale");
  for (const auto& r : runs)
    out += fmt::format("{:<12}  {:<20}  {:<16}  {:>5}  {:>5}  {:<10}  {}\n", short_id(r.id), t(r.created_utc), t(r.cluster),
                       r.hosts.size(), r.rows, r.slurm_job_id.empty() ? "-" : t(r.slurm_job_id), t(r.tool_version));
  out += fmt::format("{} run{}\n", runs.size(), runs.size() == 1 ? "" : "s");
  return out;
}

std::string trend_text(const std::vector<Series>& series, std::size_t k) {
  std::string out;
  for (const auto& s : series) {
    out += fmt::format("{} (cluster {}, {})\n", t(series_label(s.key)), t(s.key.cluster), t(s.unit));
    out += fmt::format("  {:<20}  {:<12}  {:>12}  {:>25}  {:>12}  {}\n", "created (UTC)", "run", "value", "noise band",
                       fmt::format("baseline({})", k), "software changed");
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const auto& p = s.points[i];
      const auto base = baseline_before(s, i, k);
      const std::string band = p.band.known()
                                   ? fmt::format("[{}, {}]", figure_text(p.value * (1 - p.band.down)), figure_text(p.value * (1 + p.band.up)))
                                   : "unknown";
      std::string line = fmt::format("  {:<20}  {:<12}  {:>12}  {:>25}  {:>12}  {}", t(p.created_utc), short_id(p.run_id),
                                     figure_text(p.value), band, base ? figure_text(base->median) : "-",
                                     t(join(p.changes, "; ")));
      while (line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }
  return out;
}

nlohmann::json trend_json(const std::vector<Series>& series, std::size_t k) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : series) {
    nlohmann::json points = nlohmann::json::array();
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const auto& p = s.points[i];
      const auto base = baseline_before(s, i, k);
      points.push_back({{"run", p.run_id}, {"created_utc", p.created_utc}, {"value", p.value}, {"noise", band_json(p.band)},
                        {"baseline", base ? nlohmann::json(base->median) : nlohmann::json(nullptr)},
                        {"changes", p.changes}});
    }
    out.push_back({{"series", key_json(s.key, s.unit)}, {"points", points}});
  }
  return out;
}

std::string regressions_text(const std::vector<Regression>& regs, std::size_t series_checked) {
  std::string out;
  auto runs = [](std::size_t n) { return fmt::format("{} run{}", n, n == 1 ? "" : "s"); };
  for (const auto& r : regs) {
    const auto& k = r.series->key;
    out += fmt::format("REGRESSION {} (cluster {}): {} {} (median of {} from the step) against a baseline of {} (median of "
                       "{} before it): {} [{}, {}]\n",
                       t(series_label(k)), t(k.cluster), figure_text(r.level), t(r.series->unit), runs(r.runs),
                       figure_text(r.baseline.median), runs(r.baseline.runs), percent(r.change.ratio), percent(r.change.lo),
                       std::isfinite(r.change.hi) ? percent(r.change.hi) : "inf");
    out += fmt::format("  changed in run {} ({}){}{}\n", short_id(r.changed->run_id), t(r.changed->created_utc),
                       r.recovered ? fmt::format(", recovered in run {} ({})", short_id(r.recovered->run_id),
                                                 t(r.recovered->created_utc))
                                   : "",
                       r.change_points.empty() ? "; no software version changed there"
                                               : "; software changed there: " + t(join(r.change_points, "; ")));
  }
  std::size_t hosts = 0;
  for (const auto& r : regs) hosts += r.series->key.host.empty() ? 0 : 1;
  out += fmt::format("{} regression{} in {} series ({} row{}, {} host series)\n", regs.size(), regs.size() == 1 ? "" : "s",
                     series_checked, regs.size() - hosts, regs.size() - hosts == 1 ? "" : "s", hosts);
  return out;
}

nlohmann::json regressions_json(const std::vector<Regression>& regs) {
  nlohmann::json out = nlohmann::json::array();
  auto point = [](const SeriesPoint* p) {
    return p ? nlohmann::json{{"run", p->run_id}, {"created_utc", p->created_utc}} : nlohmann::json(nullptr);
  };
  for (const auto& r : regs)
    out.push_back({{"series", key_json(r.series->key, r.series->unit)},
                   {"latest", {{"run", r.latest->run_id}, {"created_utc", r.latest->created_utc}, {"value", r.latest->value}}},
                   {"level", {{"median", r.level}, {"runs", r.runs}}},
                   {"baseline", {{"median", r.baseline.median}, {"runs", r.baseline.runs}, {"noise", band_json(r.baseline.band)}}},
                   {"change", {{"ratio", r.change.ratio}, {"lo", r.change.lo},
                               {"hi", std::isfinite(r.change.hi) ? nlohmann::json(r.change.hi) : nlohmann::json(nullptr)}}},
                   {"changed_in", point(r.changed)}, {"recovered_in", point(r.recovered)},
                   {"change_points", r.change_points}});
  return out;
}

nlohmann::json export_json(const std::vector<RunSummary>& runs, const std::vector<RowPoint>& rows) {
  std::map<std::string, nlohmann::json> by_run;
  for (const auto& p : rows)
    by_run[p.run_id].push_back({{"benchmark", p.benchmark}, {"scope", p.scope},
                                {"params", nlohmann::json::parse(p.params, nullptr, false)}, {"gpu_count", p.gpu_count},
                                {"unit", p.unit}, {"value", p.value ? nlohmann::json(*p.value) : nlohmann::json(nullptr)},
                                {"noise", {{"down", p.noise_down}, {"up", p.noise_up}, {"reps", p.reps}}},
                                {"status", p.status}, {"fields", p.fields}});
  nlohmann::json list = nlohmann::json::array();
  for (const auto& r : runs)
    list.push_back({{"id", r.id}, {"created_utc", r.created_utc}, {"cluster", r.cluster}, {"backend", r.backend},
                    {"gpuscale", r.tool_version}, {"slurm_job_id", r.slurm_job_id}, {"hosts", r.hosts},
                    {"software", nlohmann::json::parse(r.software, nullptr, false)}, {"source", r.source},
                    {"rows", by_run.count(r.id) ? by_run[r.id] : nlohmann::json::array()}});
  return {{"schema", "gpuscale.history-export"}, {"schema_version", 1}, {"runs", list}};
}

std::string export_csv(const std::vector<RowPoint>& rows) {
  // A column per stored scalar row field (results/row_fields.h), after the row's own; an object's
  // members (phase_us.compute, ...) vary by row and are in the JSON export only.
  std::vector<std::string> stored;
  for (const auto& f : row_fields())
    if (!f.history.empty() && &f != &fields::aggregate && f.type != FieldType::object) stored.emplace_back(f.history);
  std::string out = "run,created_utc,cluster,benchmark,params,gpu_count,unit,value,noise_down,noise_up,reps,status";
  for (const auto& name : stored) out += "," + name;
  out += "\n";
  for (const auto& p : rows) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}", p.run_id, p.created_utc, csv_field(p.cluster),
                       csv_field(p.benchmark), csv_field(p.params), p.gpu_count, csv_field(p.unit),
                       p.value ? fmt::format("{}", *p.value) : "", p.noise_down, p.noise_up, p.reps, csv_field(p.status));
    for (const auto& name : stored) {
      const auto it = p.fields.find(name);
      out += it == p.fields.end() ? "," : fmt::format(",{}", it->second);
    }
    out += "\n";
  }
  return out;
}

}  // namespace gpuscale::history
