// Links and NICs from a row's pair matrices (matrix_members.h).
#include "history/matrix_members.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/shown_text.h"

namespace gpuscale::history {
namespace {

using nlohmann::json;

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Cell (i, j) of an M x M array of arrays, when it is a finite number.
std::optional<double> cell(const json& m, const char* key, std::size_t i, std::size_t j) {
  if (!m.contains(key) || !m[key].is_array() || i >= m[key].size() || !m[key][i].is_array() || j >= m[key][i].size())
    return std::nullopt;
  const json& v = m[key][i][j];
  if (!v.is_number() || !std::isfinite(v.get<double>())) return std::nullopt;
  return v.get<double>();
}

std::vector<std::string> names(const json& m, const char* key) {
  std::vector<std::string> out;
  if (m.contains(key) && m[key].is_array())
    for (const auto& h : m[key]) out.push_back(h.is_string() ? clip_text(h.get_ref<const std::string&>()) : "");
  return out;
}

struct Cells {
  std::vector<double> values, down, up;
  bool spreads = true;
  void add(const json& m, std::size_t i, std::size_t j) {
    const auto v = cell(m, "values", i, j);
    if (!v || *v <= 0) return;
    values.push_back(*v);
    const auto d = cell(m, "spread_down", i, j), u = cell(m, "spread_up", i, j);
    spreads = spreads && d && u;
    down.push_back(std::max(d.value_or(0), 0.0));
    up.push_back(std::max(u.value_or(0), 0.0));
  }
};

}  // namespace

std::vector<MemberRecord> matrix_members(const ResultRow& row, int row_index) {
  std::vector<MemberRecord> out;
  std::set<std::pair<std::string, std::string>> seen;
  auto add = [&](const char* kind, std::string member, std::string host, const Cells& c, bool slowest) {
    if (c.values.empty() || !seen.insert({kind, member}).second) return;
    // A link is as fast as its slower direction; a NIC is the median of its pairs.
    const std::size_t at = slowest ? static_cast<std::size_t>(std::min_element(c.values.begin(), c.values.end()) - c.values.begin()) : 0;
    MemberRecord r{row_index, kind, std::move(member), std::move(host), 0, 0, 0, c.spreads ? 2 : 0};
    r.value = slowest ? c.values[at] : median_of(c.values);
    r.noise_down = slowest ? c.down[at] : median_of(c.down);
    r.noise_up = slowest ? c.up[at] : median_of(c.up);
    out.push_back(std::move(r));
  };
  if (!row.matrices.is_array()) return out;
  for (const json& m : row.matrices) {
    if (!m.is_object() || !m.contains("kind") || !m["kind"].is_string()) continue;
    const std::string kind = m["kind"].get<std::string>();
    const auto hosts = names(m, "hosts"), labels = names(m, "labels");
    const std::size_t n = hosts.size();
    if (kind == "node" || kind == "gpu") {
      if (kind == "gpu" && labels.size() != n) continue;
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
          Cells c;
          c.add(m, i, j);
          c.add(m, j, i);
          if (kind == "node") {
            const auto& [a, b] = std::minmax(hosts[i], hosts[j]);
            add("link", a + "~" + b, a + "," + b, c, true);
          } else {
            add("link", fmt::format("{} {}~{}", hosts[i], labels[i], labels[j]), hosts[i], c, true);
          }
        }
    } else if (kind == "rail" && m.contains("rail") && m["rail"].is_number_integer()) {
      const auto rail = m["rail"].get<long long>();
      for (std::size_t i = 0; i < n; ++i) {
        Cells c;
        for (std::size_t j = 0; j < n; ++j)
          if (j != i) c.add(m, i, j);
        add("nic", fmt::format("{} rail {}", hosts[i], rail), hosts[i], c, false);
      }
    }
  }
  return out;
}

}  // namespace gpuscale::history
