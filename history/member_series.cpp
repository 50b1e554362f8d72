// The members of stored runs as series (member_series.h).
#include "history/member_series.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace gpuscale::history {
namespace {

// The GPU name of each rank value: its UUID, or its host and its place among the host's ranks of that
// row of that run ("h1 slot 1"), counted in rank order.
std::vector<RankPoint> gpu_named(const std::vector<RankPoint>& ranks) {
  std::map<std::tuple<std::string, int, std::string>, std::vector<int>> on_host;  // (run, row, host) -> its ranks
  for (const auto& k : ranks) on_host[{k.row.run_id, k.row.row_index, k.host}].push_back(k.rank);
  for (auto& [_, list] : on_host) std::sort(list.begin(), list.end());
  std::vector<RankPoint> out = ranks;
  for (auto& k : out) {
    if (!k.gpu.empty() && k.gpu != "-") continue;
    const auto& list = on_host[{k.row.run_id, k.row.row_index, k.host}];
    const auto slot = std::lower_bound(list.begin(), list.end(), k.rank) - list.begin();
    k.gpu = k.host + " slot " + std::to_string(slot);
  }
  return out;
}

// The link or NIC series of the matrices' member values (ok rows only), software changes filled.
std::vector<MemberSeries> matrix_series(const std::vector<MemberPoint>& points, MemberKind kind) {
  std::map<SeriesKey, MemberSeries> by_key;
  for (const auto& p : points) {
    if (p.row.status != "ok" || p.value <= 0 || member_kind_named(p.kind) != kind) continue;
    SeriesKey key{p.row.cluster, p.row.benchmark, p.row.params, p.row.gpu_count, p.host, p.member};
    auto& m = by_key[key];
    m.kind = kind;
    m.member = p.member;
    m.host = p.host;
    m.series.key = key;
    m.series.unit = p.row.unit;
    m.series.points.push_back({p.row.run_id, p.row.created_utc, p.value,
                               {p.noise_down, p.noise_up, static_cast<std::size_t>(std::max(0, p.reps))},
                               software_versions(p.row.software), {}});
  }
  std::vector<MemberSeries> out;
  for (auto& [_, m] : by_key) {
    auto& pts = m.series.points;
    for (std::size_t i = 1; i < pts.size(); ++i) pts[i].changes = software_changes(pts[i - 1].software, pts[i].software);
    out.push_back(std::move(m));
  }
  return out;
}

constexpr std::string_view kKindNames[] = {"gpu", "node", "link", "nic"};  // by MemberKind

}  // namespace

std::string_view member_kind_name(MemberKind k) { return kKindNames[static_cast<int>(k)]; }

std::optional<MemberKind> member_kind_named(std::string_view name) {
  for (int i = 0; i < 4; ++i)
    if (kKindNames[i] == name) return static_cast<MemberKind>(i);
  return std::nullopt;
}

std::vector<MemberSeries> member_series(const std::vector<RankPoint>& ranks, const std::vector<MemberPoint>& matrix,
                                        const std::vector<MemberKind>& kinds) {
  std::vector<MemberSeries> out;
  for (const MemberKind kind : kinds) {
    if (kind == MemberKind::link || kind == MemberKind::nic) {
      for (auto& m : matrix_series(matrix, kind)) out.push_back(std::move(m));
      continue;
    }
    // rank_series keeps independent rows only and takes each series' median per run: one value for a GPU.
    const bool gpu = kind == MemberKind::gpu;
    for (auto& s : rank_series(gpu ? gpu_named(ranks) : ranks, gpu)) {
      MemberSeries m{kind, gpu ? s.key.gpu : s.key.host, s.key.host, {}};
      m.series = std::move(s);
      out.push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace gpuscale::history
