// The semantic validator's checks of one row on its own (results/result_semantics.h); what the
// file-wide checks need of it is kept in RowFacts.
#include "results/result_semantics.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <string_view>
#include <unordered_set>

#include <fmt/format.h>

#include "core/term_text.h"
#include "results/row_fields.h"

namespace gpuscale {
namespace {

using nlohmann::json;

// The row's figures that the row-field table marks non-negative, at `place` (the row's metrics or a
// rank's): non-negative finite numbers, or null where the field allows it (a collective at one rank
// has no bandwidth). The schema checks only their type; a negative time would turn into a nonsense fit.
// `where` makes the path only for a message: a file of 4,096 ranks x 1,000 rows checks millions.
template <typename Where, typename Add>
void check_metrics(const json& metrics, FieldPlace place, const Where& where, const Add& add) {
  if (!metrics.is_object() || metrics.empty()) return;
  for (const auto& f : row_fields()) {
    if (f.place != place || !f.non_negative) continue;
    const auto it = metrics.find(std::string(f.name));
    if (it == metrics.end()) continue;
    const auto& v = *it;
    if (v.is_null() && f.nullable) continue;
    if (!v.is_number() || !(v.get<double>() >= 0) || !std::isfinite(v.get<double>()))
      add(fmt::format("{}/metrics/{} must be a non-negative number, not {}", where(), f.name, terminal_quote(v.dump(), 40)));
  }
}

// A measured figure (a rank's value, the row's aggregate): absent (null) or a non-negative finite number.
bool bad_figure(const std::optional<double>& v) { return v && !(*v >= 0 && std::isfinite(*v)); }

// The status a tiled row has from its groups (harness/rows/row_groups.cpp): the worst group's, where skipped
// is the mildest and counts only when every group skipped.
RowStatus status_of_groups(const std::vector<RowGroup>& groups) {
  auto severity = [](RowStatus s) { return s == RowStatus::ok ? 0 : s == RowStatus::skipped ? 1 : s == RowStatus::invalid ? 2 : 3; };
  RowStatus worst = RowStatus::ok;
  bool all_skipped = true;
  for (const auto& g : groups) {
    all_skipped &= g.status == RowStatus::skipped;
    if (g.status != RowStatus::skipped && severity(g.status) > severity(worst)) worst = g.status;
  }
  return all_skipped ? RowStatus::skipped : worst;
}

std::string status_text(RowStatus s) { return std::string(row_status_name(s)); }

using RowFacts = ResultChecker::RowFacts;
constexpr std::size_t kNone = std::string::npos;

// The ranks a row lists, sorted: the groups and matrices look their ranks up in it.
std::vector<int> sorted_ranks(const ResultRow& row) {
  std::vector<int> ranks;
  ranks.reserve(row.ranks.size());
  for (const auto& r : row.ranks) ranks.push_back(r.rank);
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

// A rank's place in the sorted list, or kNone when the row does not list it.
std::size_t place_in(const std::vector<int>& sorted, int r) {
  const auto it = std::lower_bound(sorted.begin(), sorted.end(), r);
  return it != sorted.end() && *it == r ? static_cast<std::size_t>(it - sorted.begin()) : kNone;
}

// Figures no reader can use: a metric or a value that is negative or not finite, a rank listed twice.
// Each is refused (`refuse`), not merely said: no reader may act on it, --lenient or not.
template <typename Refuse>
void check_figures(const ResultRow& row, const std::vector<int>& ranks, const std::string& where, const Refuse& refuse) {
  check_metrics(row.metrics, FieldPlace::row_metric, [&] { return where; }, refuse);
  if (bad_figure(row.aggregate)) refuse(fmt::format("{}/aggregate must be a non-negative number, not {}", where, *row.aggregate));
  for (const auto& r : row.ranks) {
    check_metrics(r.metrics, FieldPlace::rank_metric, [&] { return fmt::format("{}/ranks (rank {})", where, r.rank); }, refuse);
    if (bad_figure(r.value))
      refuse(fmt::format("{}/ranks (rank {}) value must be a non-negative number, not {}", where, r.rank, *r.value));
  }
  if (auto twice = std::adjacent_find(ranks.begin(), ranks.end()); twice != ranks.end())
    refuse(fmt::format("{}: rank {} is listed twice", where, *twice));
}

// Its status against its content: ok with every rank failed, invalid with every rank passed, a figure
// or an efficiency on a row that is not ok, a skipped row with a value or without a reason.
template <typename Say>
void check_status(const ResultRow& row, const Say& say) {
  const bool any_rank = !row.ranks.empty();
  const bool all_invalid = any_rank && std::none_of(row.ranks.begin(), row.ranks.end(), [](const RankValue& r) { return r.valid; });
  const bool all_valid = std::all_of(row.ranks.begin(), row.ranks.end(), [](const RankValue& r) { return r.valid; });
  if (row.status == RowStatus::ok && all_invalid) say("status ok, but every rank failed its check (valid: false)");
  if (row.status == RowStatus::invalid && any_rank && all_valid) say("status invalid, but every rank passed its check");
  if (row.status != RowStatus::ok) {
    if (row.aggregate) say(fmt::format("status {} with an aggregate ({}): only an ok row has a figure", status_text(row.status), *row.aggregate));
    if (row.scaling_efficiency || row.fraction_of_peak)
      say(fmt::format("status {} with an efficiency: only an ok row has one", status_text(row.status)));
  }
  if (row.status == RowStatus::skipped) {
    if (std::any_of(row.ranks.begin(), row.ranks.end(), [](const RankValue& r) { return r.value.has_value(); }))
      say("status skipped, but a rank has a value");
    if (row.errors.empty()) say("status skipped without a reason (errors is empty)");
  }
}

// Its GPU count, nodes and topology, against each other and (an untiled row) the hosts of its ranks.
template <typename Say>
void check_shape(const ResultRow& row, const Say& say) {
  if (row.gpu_count < 1) say(fmt::format("gpu_count {}", row.gpu_count));
  if (row.nodes < 1 || row.nodes > row.gpu_count)
    say(fmt::format("{} nodes for a group of {} GPU{}", row.nodes, row.gpu_count, row.gpu_count == 1 ? "" : "s"));
  const char* topology = row.gpu_count == 1 ? "single" : row.nodes > 1 ? "inter-node" : "intra-node";
  if (row.topology != topology)
    say(fmt::format("topology {} for {} GPU{} on {} node{} (expected {})", terminal_quote(row.topology), row.gpu_count,
                    row.gpu_count == 1 ? "" : "s", row.nodes, row.nodes == 1 ? "" : "s", topology));
  if (row.groups.empty() && row.ranks.size() == static_cast<std::size_t>(row.gpu_count)) {
    std::unordered_set<std::string_view> spanned;
    for (const auto& r : row.ranks) spanned.insert(r.host);
    if (spanned.size() != static_cast<std::size_t>(row.nodes))
      say(fmt::format("nodes {}, but its ranks are on {} host{}", row.nodes, spanned.size(), spanned.size() == 1 ? "" : "s"));
  }
}

// Its groups: gpu_count ranks each, of the row, none twice; the row's status is theirs, one group
// spans its nodes, and group_summary counts them. Their ranks raise the row's top rank.
template <typename Say>
void check_groups(const json& raw, const ResultRow& row, const std::vector<int>& ranks, RowFacts& facts, const Say& say) {
  std::vector<std::size_t> group_of(ranks.size(), kNone);  // by place in the sorted list
  std::map<int, std::size_t> outside_of;                   // ranks the row does not list: their group
  bool spans_nodes = false;
  for (std::size_t g = 0; g < row.groups.size(); ++g) {
    const auto& group = row.groups[g];
    if (group.ranks.size() != static_cast<std::size_t>(row.gpu_count))
      say(fmt::format("group {} has {} rank{}, not gpu_count {}", g, group.ranks.size(), group.ranks.size() == 1 ? "" : "s", row.gpu_count));
    for (int r : group.ranks) {
      facts.top_rank = std::max(facts.top_rank, r);
      const std::size_t at = place_in(ranks, r);
      if (at == kNone) say(fmt::format("group {} holds rank {}, which the row does not list", g, r));
      std::size_t& owner = at == kNone ? outside_of.emplace(r, kNone).first->second : group_of[at];
      if (owner != kNone) say(fmt::format("rank {} is in group {} and group {}", r, owner, g));
      else owner = g;
    }
    if (group.value && group.status != RowStatus::ok)
      say(fmt::format("group {} has status {} and a value", g, status_text(group.status)));
    spans_nodes |= group.hosts.size() == static_cast<std::size_t>(row.nodes);
  }
  for (std::size_t k = 0; k < ranks.size(); ++k)
    if (group_of[k] == kNone) say(fmt::format("rank {} is in no group", ranks[k]));
  if (const auto s = status_of_groups(row.groups); s != row.status)
    say(fmt::format("status {}, but its groups make it {}", status_text(row.status), status_text(s)));
  if (!spans_nodes) say(fmt::format("nodes {}, but no group spans {} node{}", row.nodes, row.nodes, row.nodes == 1 ? "" : "s"));
  if (const auto it = raw.find("group_summary"); it != raw.end() && it->is_object()) {
    const auto measured = static_cast<std::size_t>(
        std::count_if(row.groups.begin(), row.groups.end(), [](const RowGroup& g) { return g.value.has_value(); }));
    if (it->value("count", json()) != json(row.groups.size()))
      say(fmt::format("group_summary.count {}, but it has {} groups", terminal_quote(it->value("count", json()).dump(), 24), row.groups.size()));
    if (it->contains("measured") && it->at("measured") != json(measured))
      say(fmt::format("group_summary.measured {}, but {} groups have a value", terminal_quote(it->at("measured").dump(), 24), measured));
  }
}

// Its pair matrices: M members, M x M values and spreads, each member's ranks on its host, no host two
// members of a node or rail matrix. Their hosts go to `row_hosts` (the file-wide check that every host
// is named), their ranks raise the row's top rank, their size its node_members.
template <typename Say>
void check_matrices(const ResultRow& row, RowFacts& facts, std::set<std::string>& row_hosts, const Say& say) {
  std::map<int, const std::string*> host_of;
  for (const auto& r : row.ranks) host_of[r.rank] = &r.host;
  for (std::size_t k = 0; k < row.matrices.size(); ++k) {
    const json& m = row.matrices[k];
    const std::string at = fmt::format("matrices/{}", k);
    if (!m.is_object() || !m.contains("hosts") || !m.at("hosts").is_array()) continue;  // the schema's part
    const json& hosts = m.at("hosts");
    const std::size_t n = hosts.size();
    const std::string kind = m.value("kind", std::string());
    if (kind != "gpu") facts.node_members = std::max(facts.node_members, n);
    for (const char* field : {"labels", "ranks"})
      if (m.contains(field) && m.at(field).is_array() && m.at(field).size() != n)
        say(fmt::format("{}: {} {} for {} members", at, m.at(field).size(), field, n));
    for (const char* field : {"values", "spread_down", "spread_up"}) {
      if (!m.contains(field) || !m.at(field).is_array()) continue;
      const json& cells = m.at(field);
      const bool square = cells.size() == n &&
                          std::all_of(cells.begin(), cells.end(), [&](const json& line) { return line.is_array() && line.size() == n; });
      if (!square)
        say(fmt::format("{}: {} is not {} x {} (its members)", at, field, n, n));
    }
    std::set<std::string> distinct;
    for (const auto& h : hosts) {
      if (!h.is_string()) continue;
      row_hosts.insert(h.get<std::string>());
      if (kind != "gpu" && !distinct.insert(h.get<std::string>()).second)
        say(fmt::format("{}: host {} is two members", at, terminal_quote(h.get<std::string>())));
    }
    if (!m.contains("ranks") || !m.at("ranks").is_array() || m.at("ranks").size() != n) continue;
    for (std::size_t member = 0; member < n; ++member) {
      const json& of = m.at("ranks")[member];
      if (!of.is_array() || !hosts[member].is_string()) continue;
      for (const auto& rj : of) {
        if (!rj.is_number_integer()) continue;
        const auto r = rj.get<long long>();
        if (r < 0 || r > INT_MAX) continue;  // the schema's part
        facts.top_rank = std::max(facts.top_rank, static_cast<int>(r));
        const auto it = host_of.find(static_cast<int>(r));
        if (it == host_of.end()) say(fmt::format("{}: member {} holds rank {}, which the row does not list", at, member, r));
        else if (*it->second != hosts[member].get<std::string>())
          say(fmt::format("{}: member {} is host {}, but its rank {} is on {}", at, member,
                          terminal_quote(hosts[member].get<std::string>()), r, terminal_quote(*it->second)));
      }
    }
  }
}

}  // namespace

void ResultChecker::add(std::string text, std::optional<std::size_t> row, bool unreadable) {
  ++report_.total;
  // Past the cap, the first unreadable one still takes the last place: a reader must see why it refuses.
  if (report_.found.size() < SemanticReport::kKept) report_.found.push_back({std::move(text), row, unreadable});
  else if (unreadable && !report_.unreadable) report_.found.back() = {std::move(text), row, unreadable};
  report_.unreadable |= unreadable;
  if (!row) report_.whole_file = true;
  else if (report_.untrusted_rows.empty() || report_.untrusted_rows.back() != *row) report_.untrusted_rows.push_back(*row);
}

// One row, check by check, in this order (the contradictions are listed as found): its figures, its
// status, its shape, its groups, its idle ranks, its matrices, a point seen before; then its hosts.
void ResultChecker::row(const json& raw, const ResultRow& row, std::size_t i) {
  const std::string where = fmt::format("/results/{}", i);
  auto say = [&](std::string what) { add(fmt::format("{}: {}", where, what), i); };
  auto refuse = [&](std::string what) { add(std::move(what), i, true); };

  const std::vector<int> ranks = sorted_ranks(row);
  check_figures(row, ranks, where, refuse);
  RowFacts facts{fmt::format("{}|{}", row.benchmark, row.params.dump()), row.benchmark, row.gpu_count, row.status,
                 ranks.empty() ? -1 : ranks.back(), ranks.size(), row.attempt.value_or(0), row.input, 0};
  check_status(row, say);
  check_shape(row, say);
  if (!row.groups.empty()) check_groups(raw, row, ranks, facts, say);
  for (int r : row.idle_ranks) {
    facts.top_rank = std::max(facts.top_rank, r);
    if (place_in(ranks, r) != kNone) say(fmt::format("idle rank {} is one of the ranks that measured", r));
  }
  if (row.matrices.is_array()) check_matrices(row, facts, row_hosts_, say);

  // The same point twice.
  const std::string key = row_key(row);
  if (auto [it, fresh] = first_row_of_key_.emplace(key, i); !fresh)
    say(fmt::format("the same benchmark, params and gpu_count as /results/{}", it->second));

  check_row_hosts(row, i);
  rows_.push_back(std::move(facts));
}

// Each rank on one host, the same in every row (of the same merged input), and every host named.
void ResultChecker::check_row_hosts(const ResultRow& row, std::size_t i) {
  const long long input = row.input.value_or(-1);
  const std::string* last = nullptr;  // a node's ranks come together: its host is kept once, not per rank
  for (const auto& r : row.ranks) {
    if (!last || *last != r.host) row_hosts_.insert(r.host);
    last = &r.host;
    const long long id = (input + 1) * (static_cast<long long>(INT_MAX) + 1) + r.rank;
    auto [it, fresh] = placements_.emplace(id, Placement{r.host, r.device_index, i});
    if (fresh || it->second.named) continue;
    it->second.named = it->second.host != r.host || it->second.device_index != r.device_index;
    if (it->second.host != r.host)
      add(fmt::format("/results/{}: rank {} is on host {}, but on {} in /results/{}", i, r.rank, terminal_quote(r.host),
                      terminal_quote(it->second.host), it->second.row),
          i);
    else if (it->second.device_index != r.device_index)
      add(fmt::format("/results/{}: rank {} has device {}, but {} in /results/{}", i, r.rank, r.device_index,
                      it->second.device_index, it->second.row),
          i);
  }
  for (const auto& g : row.groups)
    for (const auto& h : g.hosts) row_hosts_.insert(h);
}

}  // namespace gpuscale
