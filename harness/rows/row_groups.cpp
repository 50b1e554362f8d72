#include "harness/rows/row_groups.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "core/stats.h"

namespace gpuscale {

std::pair<double, double> group_spread(const ResultRow& row) {
  std::vector<double> down, up;
  for (const auto& r : row.ranks) {
    if (!r.value || !(*r.value > 0) || r.stats.n == 0) continue;
    down.push_back(std::max(0.0, (*r.value - r.stats.min) / *r.value));
    up.push_back(std::max(0.0, (r.stats.max - *r.value) / *r.value));
  }
  if (down.empty()) return {0.0, 0.0};
  return {median_of(down), median_of(up)};
}

std::string group_topology(int k, int nodes) {
  if (k <= 1) return "single";
  return nodes > 1 ? "inter-node" : "intra-node";
}

namespace {

int severity(RowStatus s) {
  switch (s) {
    case RowStatus::ok: return 0;
    case RowStatus::skipped: return 1;
    case RowStatus::invalid: return 2;
    case RowStatus::failed: return 3;
  }
  return 3;
}

}  // namespace

ResultRow combine_group_rows(std::vector<GroupRow> groups, const std::vector<int>& idle) {
  if (groups.empty()) throw std::invalid_argument("combine_group_rows: no groups");
  std::vector<std::size_t> measured;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    auto& g = groups[i];
    g.group.status = g.row.status;
    g.group.value = g.row.status == RowStatus::ok ? g.row.aggregate : std::nullopt;
    std::tie(g.group.spread_down, g.group.spread_up) = group_spread(g.row);
    if (g.group.value) measured.push_back(i);
  }
  std::sort(measured.begin(), measured.end(),
            [&](std::size_t a, std::size_t b) { return *groups[a].group.value < *groups[b].group.value; });
  const std::size_t pick = measured.empty() ? 0 : measured[(measured.size() - 1) / 2];
  ResultRow row = groups[pick].row;

  // The worst status of any group is the row's; skipped only when every group skipped.
  RowStatus worst = RowStatus::ok;
  bool all_skipped = true;
  for (const auto& g : groups) {
    all_skipped &= g.row.status == RowStatus::skipped;
    if (g.row.status != RowStatus::skipped && severity(g.row.status) > severity(worst)) worst = g.row.status;
  }
  row.status = all_skipped ? RowStatus::skipped : worst;
  row.ranks.clear();
  row.errors.clear();
  for (auto& g : groups) {
    for (auto& r : g.row.ranks) row.ranks.push_back(std::move(r));
    for (auto& e : g.row.errors)
      if (std::find(row.errors.begin(), row.errors.end(), e) == row.errors.end()) row.errors.push_back(std::move(e));
  }
  std::sort(row.ranks.begin(), row.ranks.end(), [](const RankValue& a, const RankValue& b) { return a.rank < b.rank; });
  if (row.status != RowStatus::ok) {
    row.aggregate.reset();
    row.scaling_efficiency.reset();
    row.fraction_of_peak.reset();
    row.efficiency_basis = fmt::format("none: the measurement is {}", row_status_name(row.status));
  }
  for (auto& g : groups) row.groups.push_back(std::move(g.group));
  row.idle_ranks = idle;
  return row;
}

}  // namespace gpuscale
