#include "analysis/fleet_view.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analysis/row_text.h"
#include "core/error.h"
#include "core/stats.h"

namespace gpuscale {
namespace {

using nlohmann::json;

// Why a value does not fit; empty when it does.
using Problem = std::string;

Problem strings(const json& j, std::vector<std::string>& out) {
  if (!j.is_array()) return "is not an array of strings";
  for (const auto& s : j) {
    if (!s.is_string()) return "is not an array of strings";
    out.push_back(s.get<std::string>());
  }
  return {};
}

Problem rank_list(const json& j, std::vector<int>& out) {
  if (!j.is_array()) return "is not an array of ranks";
  for (const auto& r : j) {
    if (!r.is_number_integer() || r.get<std::int64_t>() < 0 || r.get<std::int64_t>() > INT_MAX)
      return "is not an array of ranks (integers >= 0)";
    out.push_back(r.get<int>());
  }
  return {};
}

// null (or absent): no figure; a finite number >= 0: the figure; anything else does not fit.
Problem figure(const json& j, std::optional<double>& out) {
  if (j.is_null()) return {};
  if (!j.is_number() || !std::isfinite(j.get<double>()) || j.get<double>() < 0) return "is not a number >= 0 or null";
  out = j.get<double>();
  return {};
}

// null (or absent): none; an integer 0 .. INT_MAX: a rail's index.
Problem rail_index(const json& j, std::optional<int>& out) {
  if (j.is_null()) return {};
  if (!j.is_number_integer() || j.get<std::int64_t>() < 0 || j.get<std::int64_t>() > INT_MAX) return "is not an integer >= 0";
  out = j.get<int>();
  return {};
}

const json& field(const json& obj, const char* key) {
  static const json null;
  return obj.is_object() && obj.contains(key) ? obj[key] : null;
}

// The row's groups (schema-checked and converted with the row); a group without hosts is not shown.
Problem read_groups(const std::vector<RowGroup>& groups, FleetRow& row) {
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& e = groups[g];
    if (e.hosts.empty()) return fmt::format("groups/{}/hosts: is empty", g);
    if (e.value && (!std::isfinite(*e.value) || *e.value < 0))
      return fmt::format("groups/{}/value: is not a number >= 0 or null", g);
    row.groups.push_back({e.hosts, e.ranks, e.value, std::string(row_status_name(e.status))});
  }
  return {};
}

Problem read_matrix(const json& e, FleetMatrix& m) {
  if (!e.is_object()) return "is not an object";
  const auto& kind = field(e, "kind");
  if (!kind.is_string() || (kind != "node" && kind != "rail" && kind != "gpu")) return "kind: is not \"node\", \"rail\" or \"gpu\"";
  m.kind = kind.get<std::string>();
  if (auto p = rail_index(field(e, "rail"), m.rail); !p.empty()) return "rail: " + p;
  if ((m.kind == "rail") != m.rail.has_value()) return m.kind == "rail" ? "rail: is absent" : "rail: only a rail matrix has one";
  const auto& note = field(e, "note");
  if (!note.is_null() && !note.is_string()) return "note: is not a string";
  if (note.is_string()) m.note = note.get<std::string>();
  if (auto p = strings(field(e, "hosts"), m.hosts); !p.empty()) return "hosts: " + p;
  const std::size_t n = m.hosts.size();
  if (n < 2) return "hosts: a pair matrix needs at least 2 members";
  if (e.contains("labels")) {
    if (auto p = strings(e["labels"], m.labels); !p.empty()) return "labels: " + p;
    if (m.labels.size() != n) return fmt::format("labels: {} labels for {} members", m.labels.size(), n);
  } else {
    m.labels = m.hosts;
  }
  if (e.contains("ranks")) {
    const auto& ranks = e["ranks"];
    if (!ranks.is_array() || ranks.size() != n) return fmt::format("ranks: is not an array of {} rank lists", n);
    for (std::size_t i = 0; i < n; ++i)
      if (auto p = rank_list(ranks[i], m.ranks.emplace_back()); !p.empty()) return fmt::format("ranks/{}: {}", i, p);
  }
  const auto& values = field(e, "values");
  if (!values.is_array() || values.size() != n) return fmt::format("values: is not {} x {}", n, n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!values[i].is_array() || values[i].size() != n) return fmt::format("values: is not {} x {}", n, n);
    auto& row = m.values.emplace_back(n);
    for (std::size_t j = 0; j < n; ++j)
      if (auto p = figure(values[i][j], row[j]); !p.empty()) return fmt::format("values/{}/{}: {}", i, j, p);
  }
  const auto& directed = field(e, "directed");
  if (!directed.is_null() && !directed.is_boolean()) return "directed: is not true or false";
  m.directed = directed.is_boolean() && directed.get<bool>();
  return {};
}

// analysis.outliers[i]; throws with the entry's path.
FleetOutlier read_outlier(const std::string& file, std::size_t i, const json& e) {
  auto bad = [&](const char* key, const std::string& why) {
    return Error(fmt::format("{}: /analysis/outliers/{}{}{}: {}", file, i, *key ? "/" : "", key, why));
  };
  if (!e.is_object()) throw bad("", "is not an object");
  FleetOutlier o;
  const auto& kind = field(e, "kind");
  if (!kind.is_string() || kind.get<std::string>().empty()) throw bad("kind", "is not a non-empty string");
  o.kind = kind.get<std::string>();
  if (auto p = strings(field(e, "hosts"), o.hosts); !p.empty()) throw bad("hosts", p);
  if (e.contains("ranks"))
    if (auto p = rank_list(e["ranks"], o.ranks); !p.empty()) throw bad("ranks", p);
  using Figure = std::pair<const char*, std::optional<double>*>;
  for (auto [key, out] : {Figure{"value", &o.value}, Figure{"median", &o.median}})
    if (auto p = figure(field(e, key), *out); !p.empty()) throw bad(key, p);
  // The deficit is 1 - value / median, shown as written: any finite number (the schema's rule too).
  const auto& deficit = field(e, "deficit");
  if (!deficit.is_null() && (!deficit.is_number() || !std::isfinite(deficit.get<double>())))
    throw bad("deficit", "is not a number");
  if (deficit.is_number()) o.deficit = deficit.get<double>();
  using Text = std::pair<const char*, std::string*>;
  for (auto [key, out] : {Text{"reason", &o.reason}, Text{"benchmark", &o.benchmark}, Text{"explained_by", &o.explained_by},
                          Text{"unit", &o.unit}}) {
    const auto& v = field(e, key);
    if (!v.is_null() && !v.is_string()) throw bad(key, "is not a string");
    if (v.is_string()) *out = v.get<std::string>();
  }
  const auto& count = field(e, "gpu_count");
  if (!count.is_null()) {
    if (!count.is_number_integer() || count.get<std::int64_t>() < 1 || count.get<std::int64_t>() > INT_MAX)
      throw bad("gpu_count", "is not an integer >= 1");
    o.gpu_count = count.get<int>();
  }
  using List = std::pair<const char*, std::vector<std::string>*>;
  const auto& params = field(e, "params");
  if (!params.is_null() && !params.is_object()) throw bad("params", "is not an object");
  if (params.is_object()) o.params = params;
  for (auto [key, out] : {List{"uuids", &o.uuids}, List{"pci_bus_ids", &o.pci_bus_ids}})
    if (!field(e, key).is_null())
      if (auto p = strings(field(e, key), *out); !p.empty()) throw bad(key, p);
  using Rail = std::pair<const char*, std::optional<int>*>;
  for (auto [key, out] : {Rail{"rail", &o.rail}, Rail{"explained_by_rail", &o.explained_by_rail}})
    if (auto p = rail_index(field(e, key), *out); !p.empty()) throw bad(key, p);
  const auto& nics = field(e, "nics");
  if (!nics.is_null() && !nics.is_array()) throw bad("nics", "is not an array");
  for (const auto& n : nics.is_array() ? nics : json::array()) {
    if (n.is_null()) {
      o.nics.push_back("-");
      continue;
    }
    if (!n.is_object() || !field(n, "device").is_string() || !field(n, "port").is_number_integer())
      throw bad("nics", "is not an array of {device, port} or null");
    o.nics.push_back(fmt::format("{} port {}", n["device"].get<std::string>(), n["port"].get<std::int64_t>()));
  }
  const auto& note = field(e, "nic_note");
  if (!note.is_null() && !note.is_string()) throw bad("nic_note", "is not a string");
  if (note.is_string()) o.nic_note = note.get<std::string>();
  return o;
}

void read_analysis(const LoadedResult& run, FleetView& v) {
  const auto& analysis = field(run.doc, "analysis");
  if (analysis.is_object() && analysis.contains("outliers")) {
    const auto& list = analysis["outliers"];
    if (!list.is_array()) throw Error(fmt::format("{}: /analysis/outliers: is not an array", run.path));
    v.analysed = true;
    for (std::size_t i = 0; i < list.size(); ++i) v.outliers.push_back(read_outlier(run.path, i, list[i]));
  }
  if (analysis.is_object() && analysis.contains("outlier_hosts")) {
    if (auto p = strings(analysis["outlier_hosts"], v.outlier_hosts); !p.empty())
      throw Error(fmt::format("{}: /analysis/outlier_hosts: {}", run.path, p));
    v.hosts_listed = true;
  }
}

std::optional<double> median_or_none(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  return median_of(std::move(v));
}

std::multiset<int> rank_set(const std::vector<int>& a, const std::vector<int>& b = {}) {
  std::multiset<int> s(a.begin(), a.end());
  s.insert(b.begin(), b.end());
  return s;
}

std::vector<FleetRanked> lowest(std::vector<FleetRanked> all, std::size_t n, bool lower_is_better = false) {
  std::stable_sort(all.begin(), all.end(),
                   [=](const auto& a, const auto& b) { return lower_is_better ? a.value > b.value : a.value < b.value; });
  if (all.size() > n) all.resize(n);
  return all;
}

}  // namespace

std::size_t FleetRow::measured() const {
  return static_cast<std::size_t>(std::count_if(groups.begin(), groups.end(), [](const auto& g) { return g.value.has_value(); }));
}

std::optional<double> FleetMatrix::pair(std::size_t i, std::size_t j) const {
  if (i == j || i >= size() || j >= size()) return std::nullopt;
  if (!directed && i > j) std::swap(i, j);
  return values[i][j];
}

bool FleetView::suspect_host(const std::string& host) const {
  return std::find(outlier_hosts.begin(), outlier_hosts.end(), host) != outlier_hosts.end();
}

FleetView fleet_view(const LoadedResult& run) {
  FleetView v;
  for (std::size_t i = 0; i < run.rows.size(); ++i) {
    const auto& r = run.rows[i];
    if (!r.groups.empty()) {
      FleetRow row;
      row.row = i;
      if (auto p = read_groups(r.groups, row); !p.empty()) {
        v.problems.push_back(fmt::format("/results/{}/{}: the row's groups are not shown", i, p));
      } else {
        std::vector<double> values;
        for (const auto& g : row.groups)
          if (g.value) values.push_back(*g.value);
        row.median = median_or_none(values);  // what group_summary.median says, computed from the groups
        row.intra_node = std::all_of(row.groups.begin(), row.groups.end(), [](const auto& g) {
          return std::all_of(g.hosts.begin(), g.hosts.end(), [&](const auto& h) { return h == g.hosts.front(); });
        });
        v.rows.push_back(std::move(row));
      }
    }
    if (r.matrices.is_null()) continue;
    if (!r.matrices.is_array()) {
      v.problems.push_back(fmt::format("/results/{}/matrices: is not an array: not drawn", i));
      continue;
    }
    for (std::size_t k = 0; k < r.matrices.size(); ++k) {
      FleetMatrix m;
      m.row = i;
      if (auto p = read_matrix(r.matrices[k], m); !p.empty())
        v.problems.push_back(fmt::format("/results/{}/matrices/{}: {}: not drawn", i, k, p));
      else
        v.matrices.push_back(std::move(m));
    }
  }
  read_analysis(run, v);
  return v;
}

std::optional<double> matrix_median(const FleetMatrix& m) {
  std::vector<double> all;
  for (std::size_t i = 0; i < m.size(); ++i)
    for (std::size_t j = m.directed ? 0 : i + 1; j < m.size(); ++j)
      if (auto v = m.pair(i, j)) all.push_back(*v);
  return median_or_none(std::move(all));
}

std::vector<FleetRanked> lowest_members(const FleetMatrix& m, std::size_t n) {
  const auto med = matrix_median(m);
  if (!med) return {};
  std::vector<FleetRanked> all;
  for (std::size_t i = 0; i < m.size(); ++i) {
    std::vector<double> mine;
    for (std::size_t j = 0; j < m.size(); ++j) {
      if (auto v = m.pair(i, j)) mine.push_back(*v);
      if (m.directed)
        if (auto v = m.pair(j, i)) mine.push_back(*v);
    }
    if (!mine.empty()) all.push_back({m.labels[i], median_of(std::move(mine)), *med});
  }
  return lowest(std::move(all), n);
}

std::vector<FleetRanked> lowest_pairs(const FleetMatrix& m, std::size_t n, const std::string& prefix) {
  const auto med = matrix_median(m);
  if (!med) return {};
  std::vector<FleetRanked> all;
  for (std::size_t i = 0; i < m.size(); ++i)
    for (std::size_t j = m.directed ? 0 : i + 1; j < m.size(); ++j)
      if (auto v = m.pair(i, j))
        all.push_back({fmt::format("{}{} {} {}", prefix, m.labels[i], m.directed ? "->" : "-", m.labels[j]), *v, *med});
  return lowest(std::move(all), n);
}

std::string row_point(const ResultRow& r) {
  const auto label = params_label(r.params, false);
  return label.empty() ? r.benchmark : r.benchmark + " " + label;
}

std::string group_label(const FleetRow& r, std::size_t g) {
  const auto& group = r.groups[g];
  std::set<std::string> distinct(group.hosts.begin(), group.hosts.end());
  std::string label;
  for (const auto& h : distinct) label += (label.empty() ? "" : "+") + h;
  const bool shared = std::count_if(r.groups.begin(), r.groups.end(), [&](const auto& o) { return o.hosts == group.hosts; }) > 1;
  if (!shared || group.ranks.empty()) return label;
  std::string ranks;
  for (int rank : group.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(rank);
  return label + " r" + ranks;
}

std::vector<FleetRanked> lowest_groups(const FleetRow& r, std::size_t n, bool lower_is_better) {
  if (!r.median) return {};
  std::vector<FleetRanked> all;
  for (std::size_t g = 0; g < r.groups.size(); ++g)
    if (r.groups[g].value) all.push_back({group_label(r, g), *r.groups[g].value, *r.median});
  return lowest(std::move(all), n, lower_is_better);
}

std::vector<std::size_t> per_node_rows(const LoadedResult& run, const FleetView& view) {
  std::map<std::size_t, std::size_t> fleet_of;  // row index -> index into view.rows
  for (std::size_t i = 0; i < view.rows.size(); ++i)
    if (view.rows[i].intra_node && view.rows[i].measured() >= 2 && view.rows[i].median.value_or(0) > 0) fleet_of[view.rows[i].row] = i;
  std::set<std::size_t> chosen;
  for (const auto& g : group_rows(run.rows))
    for (const auto& s : g.series) {
      std::vector<const ResultRow*> rows;
      int largest = 0;
      for (const ResultRow* r : s.table_rows())
        if (fleet_of.count(static_cast<std::size_t>(r - run.rows.data()))) {
          rows.push_back(r);
          largest = std::max(largest, r->gpu_count);
        }
      for (const ResultRow* r : rows)
        if (r->gpu_count == 1 || r->gpu_count == largest) chosen.insert(fleet_of[static_cast<std::size_t>(r - run.rows.data())]);
    }
  return {chosen.begin(), chosen.end()};
}

bool outlier_of_row(const FleetOutlier& o, const ResultRow& row) {
  if (!o.benchmark.empty() && o.benchmark != row.benchmark) return false;
  if (o.gpu_count && *o.gpu_count != row.gpu_count) return false;
  for (const auto& [k, v] : o.params.items())
    if (!row.params.is_object() || !row.params.contains(k) || row.params[k] != v) return false;
  return true;
}

MatrixMarks matrix_marks(const FleetMatrix& m, const ResultRow& row, const FleetView& view) {
  MatrixMarks marks;
  const std::size_t n = m.size();
  marks.suspect.assign(n, false);
  const bool ranked = m.ranks.size() == n;
  // A rail's outliers mark its own matrix; the others mark the node and GPU matrices.
  const auto member_kind = m.kind == "rail" ? std::string("node") : m.kind;
  for (std::size_t i = 0; i < n; ++i) {
    if (m.kind == "node" && view.suspect_host(m.hosts[i])) marks.suspect[i] = true;
    for (const auto& o : view.outliers) {
      if (o.kind != member_kind || o.rail != m.rail || !outlier_of_row(o, row)) continue;
      if (m.kind != "gpu" && o.hosts == std::vector<std::string>{m.hosts[i]}) marks.suspect[i] = true;
      if (m.kind == "gpu" && ranked && !o.ranks.empty() && rank_set(o.ranks) == rank_set(m.ranks[i])) marks.suspect[i] = true;
    }
  }
  for (const auto& o : view.outliers) {
    if (o.kind != "pair" || o.rail != m.rail || !outlier_of_row(o, row)) continue;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        if (i == j) continue;
        bool hit = false;
        if (ranked && !o.ranks.empty() && !m.ranks[i].empty() && !m.ranks[j].empty()) {
          auto both = m.ranks[i];
          both.insert(both.end(), m.ranks[j].begin(), m.ranks[j].end());
          hit = m.directed ? o.ranks == both : rank_set(o.ranks) == rank_set(both);
        } else if (m.kind != "gpu" && o.hosts.size() == 2) {
          hit = o.hosts == std::vector<std::string>{m.hosts[i], m.hosts[j]} ||
                (!m.directed && o.hosts == std::vector<std::string>{m.hosts[j], m.hosts[i]});
        }
        if (hit) marks.cells.emplace_back(i, j);
      }
  }
  return marks;
}

std::vector<bool> group_marks(const FleetRow& r, const ResultRow& row, const FleetView& view) {
  std::vector<bool> marks(r.groups.size(), false);
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    const auto& group = r.groups[g];
    for (const auto& h : group.hosts) marks[g] = marks[g] || view.suspect_host(h);
    for (const auto& o : view.outliers) {
      if (o.kind != "group" || !outlier_of_row(o, row)) continue;
      const bool by_ranks = !o.ranks.empty() && !group.ranks.empty();
      if (by_ranks ? rank_set(o.ranks) == rank_set(group.ranks) : o.hosts == group.hosts) marks[g] = true;
    }
  }
  return marks;
}

}  // namespace gpuscale
