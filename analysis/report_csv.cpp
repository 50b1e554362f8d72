// The report as CSV: one line per result row of every input (all message sizes), RFC 4180 quoting; a
// collective row also carries nccl-tests' columns (analysis/nccl_table.h: size, count, type, redop, root,
// placement, #wrong), with time_us, algbw and busbw the row's own metrics.
#include <algorithm>

#include <fmt/format.h>

#include "analysis/escape.h"
#include "analysis/nccl_table.h"
#include "analysis/noise.h"
#include "analysis/report.h"
#include "analysis/row_text.h"
#include "core/stats.h"

namespace gpuscale {
namespace {

std::string num(const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : ""; }

}  // namespace

std::string report_csv(const std::vector<FileReport>& files) {
  std::string out =
      "file,cluster,benchmark,scope,point,params,gpu_count,nodes,topology,unit,status,value,scaling_efficiency,"
      "expected_peak,fraction_of_peak,size_bytes,time_us,algbw,busbw,ranks,rank_min,rank_median,rank_max,noise_down,"
      "noise_up,stragglers,size,count,type,redop,root,placement,wrong\r\n";
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
                           num(number_metric(r.metrics, "wrong")));
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6g},{:.6g},{},{}\r\n",
                         csv_field(f.run.path), csv_field(f.run.cluster), csv_field(r.benchmark), csv_field(r.scope),
                         csv_field(params_label(r.params, false)), csv_field(r.params.dump()), r.gpu_count, r.nodes,
                         csv_field(r.topology), csv_field(r.unit), row_status_name(r.status), num(r.aggregate),
                         num(r.scaling_efficiency), num(r.expected_peak), num(r.fraction_of_peak), size,
                         num(number_metric(r.metrics, "time_us")), num(number_metric(r.metrics, "algbw")),
                         num(number_metric(r.metrics, "busbw")), r.ranks.size(), num(lo), num(med), num(hi), band.down, band.up,
                         stragglers, nccl);
    }
  }
  return out;
}

}  // namespace gpuscale
