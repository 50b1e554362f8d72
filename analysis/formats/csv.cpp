// The report as CSV: one line per result row of every input (all message sizes), RFC 4180 quoting; a
// collective row also carries nccl-tests' columns (analysis/nccl_table.h: size, count, type, redop, root,
// placement, #wrong), with time_us, algbw and busbw the row's own metrics.
#include <algorithm>

#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/nccl_table.h"
#include "analysis/noise.h"
#include "analysis/reporter.h"
#include "analysis/row_text.h"
#include "results/row_fields.h"
#include "core/stats.h"

namespace gpuscale {
namespace {

std::string num(const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : ""; }

// A row field's cell (results/row_fields.h): figures to 6 significant digits, text quoted as RFC 4180 says.
std::string field_cell(const ResultRow& r, const RowField& f) {
  if (f.type == FieldType::number) return num(number_field(r, f));
  if (&f == &fields::status && untrusted_reason(r)) return "UNTRUSTED";  // --lenient (analysis/row_text.h)
  const auto v = field_json(r, f);
  if (v.is_null()) return "";
  if (v.is_string()) return csv_field(v.get<std::string>());
  return v.is_number_integer() ? v.dump() : csv_field(v.dump());
}

// Columns: the file, its cluster and the row's point; every row field with a CSV column, in the table's
// order; then what the report derives (the requested size, the ranks' spread, noise, stragglers, and
// nccl-tests' columns).
std::string report_csv(const std::vector<FileReport>& files) {
  std::string out = "file,cluster,point";
  for (const auto& f : row_fields())
    if (!f.csv.empty()) out += fmt::format(",{}", f.csv);
  out += ",size_bytes,ranks,rank_min,rank_median,rank_max,noise_down,noise_up,stragglers,size,count,type,redop,root,"
         "placement,wrong\r\n";
  for (const auto& f : files) {
    for (const auto& r : f.run.rows) {
      std::vector<double> values;
      for (const auto& rv : r.ranks)
        if (rv.value) values.push_back(*rv.value);
      std::optional<double> lo, med, hi;
      if (!values.empty()) {
        const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
        lo = *mn;
        hi = *mx;
        med = median_of(values);
      }
      const auto band = noise_band(r);
      std::size_t stragglers = 0;
      for (const auto& s : f.stragglers) stragglers += s.row == &r;
      const std::string size =
          r.params.contains("size_bytes") && r.params["size_bytes"].is_number() ? r.params["size_bytes"].dump() : "";
      // nccl-tests' columns of a collective row (size, count, type, redop, root), its placement and #wrong.
      std::string nccl = ",,,,,,";
      if (const auto p = nccl_point(r))
        nccl = fmt::format("{},{},{},{},{},{},{}", csv_field(p->size), csv_field(p->count), csv_field(p->type),
                           csv_field(p->redop), csv_field(p->root), csv_field(r.params.value("placement", std::string())),
                           num(number_field(r, fields::wrong)));
      out += fmt::format("{},{},{}", csv_field(f.run.path), csv_field(f.run.cluster), csv_field(params_label(r.params, false)));
      for (const auto& field : row_fields())
        if (!field.csv.empty()) out += "," + field_cell(r, field);
      out += fmt::format(",{},{},{},{},{},{:.6g},{:.6g},{},{}\r\n", size, r.ranks.size(), num(lo), num(med), num(hi),
                         band.down, band.up, stragglers, nccl);
    }
  }
  return out;
}

// One line per row: the files' sections and the extras (prose) have no place in it.
class CsvReporter final : public Reporter {
 public:
  std::string_view flag() const override { return "--csv"; }
  std::string_view help() const override { return "write CSV, one line per result row"; }
  bool may_write_stdout() const override { return true; }
  std::string render(const std::vector<FileReport>& files, const ReportExtras&) const override { return report_csv(files); }
};

}  // namespace

const Reporter& csv_format() {
  static const CsvReporter csv;
  return csv;
}

}  // namespace gpuscale
