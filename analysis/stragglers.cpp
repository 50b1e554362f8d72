#include "analysis/stragglers.h"

#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/result_set.h"
#include "analysis/row_text.h"
#include "core/stats.h"

namespace gpuscale {

std::vector<Straggler> find_stragglers(const nlohmann::json& doc, const std::vector<ResultRow>& rows,
                                       double threshold) {
  std::vector<Straggler> out;
  for (const auto& row : rows) {
    if (row.status != RowStatus::ok || row.scope != "independent") continue;
    std::vector<double> values;
    for (const auto& r : row.ranks)
      if (r.value) values.push_back(*r.value);
    if (values.size() < 2) continue;
    const double median = median_of(values);
    if (!(median > 0)) continue;
    for (const auto& r : row.ranks) {
      if (!r.value || !(*r.value < median * (1 - threshold))) continue;
      const nlohmann::json* id = rank_identity(doc, r.rank, r.host);
      out.push_back({&row, r.rank, r.host, r.device_index, device_detail(id, "uuid"), device_detail(id, "pci_bus_id"),
                     *r.value, median, 1 - *r.value / median});
    }
  }
  return out;
}

std::string format_stragglers(const std::vector<Straggler>& list, double threshold, const TextStyle& style) {
  std::string out = fit_lines(fmt::format("\nstragglers (independent work, more than {:.0f}% below the median of the "
                                          "ranks): {}\n",
                                          threshold * 100, list.empty() ? std::string("none") : std::to_string(list.size())),
                              style.width);
  if (list.empty()) return out;
  std::vector<double> figures;
  for (const auto& s : list) figures.insert(figures.end(), {s.value, s.median});
  const int decimals = column_decimals(figures);
  TextTable t;
  t.columns = {{"point", false},        {style.device.many, true}, {"rank", true, true}, {"host", false, true},
               {"value", true},         {"median", true},          {"below", true},      {style.device.one == "rank" ? "device" : "GPU", true},
               {"UUID", false},         {"PCI bus id", false}};
  for (const auto& s : list)
    t.rows.push_back({term_text(s.row->benchmark + " " + params_label(s.row->params, false)), std::to_string(s.row->gpu_count),
                      std::to_string(s.rank), term_text(s.host), fixed_text(s.value, decimals), fixed_text(s.median, decimals),
                      fmt::format("{:.1f}%", s.deficit * 100), std::to_string(s.device_index), term_text(s.uuid),
                      term_text(s.pci_bus_id)});
  return out + t.render(style.width);
}

nlohmann::json straggler_analysis(const nlohmann::json& doc, const std::vector<ResultRow>& rows, double threshold) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& s : find_stragglers(doc, rows, threshold))
    list.push_back({{"benchmark", s.row->benchmark},
                    {"params", s.row->params},
                    {"gpu_count", s.row->gpu_count},
                    {"rank", s.rank},
                    {"host", s.host},
                    {"device_index", s.device_index},
                    {"uuid", s.uuid},
                    {"pci_bus_id", s.pci_bus_id},
                    {"value", s.value},
                    {"median", s.median},
                    {"deficit", s.deficit},
                    {"unit", s.row->unit}});
  return {{"straggler_threshold", threshold},
          {"straggler_rule", "independent rows: ranks more than straggler_threshold below the median of the row's ranks"},
          {"stragglers", std::move(list)}};
}

}  // namespace gpuscale
