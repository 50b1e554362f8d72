#include "analysis/iteration_stragglers.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/stats.h"
#include "results/row_fields.h"
#include "text/escape.h"

namespace gpuscale {

std::vector<IterationStraggler> find_iteration_stragglers(const std::vector<ResultRow>& rows) {
  struct Seen {
    std::string host;
    std::vector<double> shares;
  };
  std::map<int, Seen> by_rank;
  std::size_t named = 0;
  for (const auto& r : rows) {
    if (r.status != RowStatus::ok || r.scope != "collective" || r.gpu_count < 2) continue;
    const auto rank = number_field(r, fields::iter_straggler_rank);
    if (!rank) continue;
    ++named;
    auto& seen = by_rank[static_cast<int>(*rank)];
    for (const auto& v : r.ranks)
      if (v.rank == static_cast<int>(*rank)) seen.host = v.host;
    seen.shares.push_back(number_field(r, fields::iter_straggler_share).value_or(0));
  }
  std::vector<IterationStraggler> out;
  for (auto& [rank, seen] : by_rank)
    out.push_back({rank, seen.host, seen.shares.size(), named, median_of(seen.shares)});
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.rows > b.rows; });
  return out;
}

nlohmann::json iteration_stragglers_json(const std::vector<IterationStraggler>& list) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : list)
    out.push_back({{"rank", s.rank}, {"host", s.host}, {"rows", s.rows}, {"of_rows", s.of_rows},
                   {"median_share", s.median_share}});
  return out;
}

std::string format_iteration_stragglers(const std::vector<IterationStraggler>& list, const TextStyle& style,
                                        std::size_t shown) {
  if (list.empty()) return "";
  std::string out = fit_lines(fmt::format("\nper-iteration stragglers (collectives: the rank slowest in the most "
                                          "iterations of each row's -I pass), over {} rows:\n",
                                          list.front().of_rows),
                              style.width);
  TextTable t;
  t.columns = {{"rank", true, true}, {"host", false, true}, {"rows", true}, {"median share", true}};
  for (std::size_t i = 0; i < list.size() && i < shown; ++i) {
    const auto& s = list[i];
    t.rows.push_back({std::to_string(s.rank), term_text(s.host), fmt::format("{} of {}", s.rows, s.of_rows),
                      fmt::format("{:.0f}%", s.median_share * 100)});
  }
  out += t.render(style.width);
  if (list.size() > shown) out += fmt::format("  ... and {} other ranks\n", list.size() - shown);
  return out;
}

}  // namespace gpuscale
