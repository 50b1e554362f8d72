#include "analysis/row_text.h"

#include <algorithm>

#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/nccl_table.h"
#include "text/number_text.h"
#include "core/units.h"
#include "results/row_fields.h"

namespace gpuscale {

std::string params_label(const nlohmann::json& p, bool drop_size) {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : " ") + s; };
  auto text = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  auto size = [&](const nlohmann::json& v) {
    return v.is_number_integer() && v.get<long long>() >= 0 ? format_size(v.get<std::uint64_t>()) : text(v);
  };
  if (p.contains("dtype")) add(text(p["dtype"]));
  const bool gemm = p.contains("m") && p.contains("n") && p.contains("k");
  if (gemm)
    add(fmt::format("{}x{}x{}:{}", text(p["m"]), text(p["n"]), text(p["k"]),
                    p.contains("layout") ? text(p["layout"]) : std::string("NN")));
  // train-step: the model and its parallel layout first (a layout is a GEMM's transposes otherwise).
  if (p.contains("name") && p["name"].is_string()) add(text(p["name"]));
  if (!gemm && p.contains("layout")) add(text(p["layout"]));
  if (p.contains("array_bytes")) add(size(p["array_bytes"]));
  if (p.contains("op")) add(text(p["op"]));
  if (p.contains("placement")) add(text(p["placement"]));
  if (!drop_size && p.contains("size_bytes")) add(size(p["size_bytes"]));
  static const char* known[] = {"dtype",    "m",  "n",         "k",          "layout", "array_bytes",
                                "elements", "op", "placement", "size_bytes", "root",   "name"};
  for (const auto& [k, v] : p.items()) {
    if (std::find(std::begin(known), std::end(known), k) != std::end(known)) continue;
    // An object (train-step's shrunk_from: what --quick changed) is named, not spelt out: the row has it.
    if (v.is_object() && v.empty()) continue;
    add(v.is_object() ? k : fmt::format("{}={}", k, text(v)));
  }
  return out;
}

std::optional<std::uint64_t> size_param(const nlohmann::json& params) {
  if (!params.contains("size_bytes")) return std::nullopt;
  const auto& v = params["size_bytes"];
  if (!v.is_number_integer() || v.get<long long>() < 0) return std::nullopt;
  return v.get<std::uint64_t>();
}

std::string point_at(const ResultRow& r) { return fmt::format("{} @ {} GPU(s)", params_label(r.params, false), r.gpu_count); }

std::string percent_text(const std::optional<double>& v) { return v ? fmt::format("{:.1f}%", *v * 100) : "-"; }

std::string value_text(const ResultRow& r) {
  switch (r.status) {
    case RowStatus::ok: return r.aggregate ? figure_text(*r.aggregate) : "-";
    case RowStatus::invalid: return "INVALID";
    case RowStatus::failed: return "FAILED";
    case RowStatus::skipped: return "skipped";
  }
  return "-";
}

std::string valid_text(const ResultRow& r) {
  if (untrusted_reason(r)) return "UNTRUSTED";
  return r.status == RowStatus::ok ? "yes" : std::string(row_status_name(r.status));
}

const std::string* untrusted_reason(const ResultRow& r) {
  for (const auto& f : r.flags)
    if (f.kind == kUntrustedFlag) return &f.reason;
  return nullptr;
}

bool row_is_problem(const ResultRow& r) { return r.status == RowStatus::invalid || r.status == RowStatus::failed; }

std::vector<const ResultRow*> Series::table_rows() const {
  if (!sized) return rows;
  std::vector<const ResultRow*> out;
  for (const ResultRow* r : rows)
    if (size_param(r->params) == largest_size)
      out.push_back(r);
  return out;
}

std::vector<BenchmarkGroup> group_rows(const std::vector<ResultRow>& rows) {
  std::vector<BenchmarkGroup> groups;
  for (const auto& r : rows) {
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.benchmark == r.benchmark; });
    if (g == groups.end()) {
      groups.push_back({r.benchmark, r.unit, r.scope, {}});
      g = std::prev(groups.end());
    }
    const auto size = size_param(r.params);
    const bool sized = size.has_value();
    const auto label = params_label(r.params, sized);
    auto s = std::find_if(g->series.begin(), g->series.end(), [&](const auto& x) { return x.label == label; });
    if (s == g->series.end()) {
      g->series.push_back({label, sized, 0, {}});
      s = std::prev(g->series.end());
    }
    if (sized) s->largest_size = std::max(s->largest_size, *size);
    s->rows.push_back(&r);
  }
  return groups;
}

namespace {

// Collective rows' scaling efficiency is their fraction of the link peak: the column would repeat % peak.
bool scaling_repeats_peak(const BenchmarkGroup& g) {
  for (const auto& s : g.series)
    for (const ResultRow* r : s.rows)
      if (r->scaling_efficiency != r->fraction_of_peak) return false;
  return g.scope == "collective";
}

}  // namespace

HeadlineTable headline_table(const BenchmarkGroup& g, const DeviceWord& device) {
  const bool sized = std::any_of(g.series.begin(), g.series.end(), [](const auto& s) { return s.sized; });
  const bool scaling = !scaling_repeats_peak(g);
  HeadlineTable h;
  h.title = fmt::format("{} ({}{}{})", g.benchmark, sized ? "busbw, " : "", g.unit,
                        sized ? "; each series at its largest size" : "");
  std::vector<double> shown;
  for (const auto& s : g.series)
    for (const ResultRow* r : s.table_rows())
      if (r->status == RowStatus::ok && r->aggregate) shown.push_back(*r->aggregate);
  const int decimals = column_decimals(shown);
  // The columns: the point, then every row field with a table column (results/row_fields.h), validity
  // last; a row metric's column (the energy's) only where a row of the table has a figure for it. The
  // GPU count is headed by the device word, a sized series' value is its busbw.
  auto has_figure = [&](const RowField& f) {
    for (const auto& s : g.series)
      for (const ResultRow* r : s.table_rows())
        if (number_field(*r, f)) return true;
    return false;
  };
  std::vector<const RowField*> cols;
  for (const auto& f : row_fields())
    if (!f.column.empty() && (scaling || &f != &fields::scaling_efficiency) &&
        (f.place != FieldPlace::row_metric || has_figure(f)))
      cols.push_back(&f);
  std::stable_partition(cols.begin(), cols.end(), [](const RowField* f) { return f != &fields::status; });
  auto& t = h.table;
  t.columns = {{"point", false}};
  for (const RowField* f : cols) {
    std::string heading(f->column);
    if (f == &fields::gpu_count) heading = device.many;
    if (f == &fields::aggregate && sized) heading = "busbw";
    t.columns.push_back({heading, f->shown != Shown::text});
  }
  auto cell = [&](const ResultRow& r, const RowField& f) -> std::string {
    if (&f == &fields::aggregate) {
      if (r.status != RowStatus::ok) return value_text(r);  // INVALID, FAILED, skipped: never a figure
      return r.aggregate ? fixed_text(*r.aggregate, decimals) : "n/a";
    }
    if (&f == &fields::status) return valid_text(r);
    const auto v = field_json(r, f);
    switch (f.shown) {
      case Shown::count: return v.is_number() ? v.dump() : "-";
      case Shown::percent: return percent_text(number_field(r, f));
      case Shown::text: return v.is_string() ? v.get<std::string>() : "-";
      case Shown::figure: return v.is_number() ? figure_text(v.get<double>()) : "-";
    }
    return "-";
  };
  for (const auto& s : g.series) {
    const std::string label = s.sized ? s.label + " " + format_size(s.largest_size) : s.label;
    bool first = true;
    for (const ResultRow* r : s.table_rows()) {
      std::vector<std::string> cells = {first ? label : ""};
      for (const RowField* f : cols) cells.push_back(cell(*r, *f));
      t.rows.push_back(std::move(cells));
      h.labels.push_back(label);
      first = false;
    }
  }
  return h;
}

std::string format_summary(const std::vector<ResultRow>& rows, const TextStyle& style) {
  std::string out;
  for (const auto& g : group_rows(rows)) {
    auto h = headline_table(g, style.device);
    for (auto& row : h.table.rows)
      for (auto& cell : row) cell = term_text(cell);
    out += fit_lines("\n" + term_text(h.title) + "\n", style.width) + h.table.render(style.width);
  }
  out += nccl_tables_text(rows, style.device);  // nccl-tests' own layout, wider than 80 columns on purpose
  std::size_t bad = std::count_if(rows.begin(), rows.end(), row_is_problem);
  if (bad > 0) {
    std::string list = fmt::format("\n{} measurement(s) invalid or failed:\n", bad);
    for (const auto& r : rows)
      if (row_is_problem(r))
        list += fmt::format("  {} {} at {}: {}\n", term_text(r.benchmark), term_text(params_label(r.params, false)),
                            style.device.count(r.gpu_count),
                            term_text(r.errors.empty() ? row_status_name(r.status) : r.errors.front()));
    out += fit_lines(list, style.width);
  }
  return out;
}

}  // namespace gpuscale
