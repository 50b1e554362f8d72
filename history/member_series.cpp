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
  std::vector<RankPoint> out = ranks;
  for (auto& k : out) {
    if (!k.gpu.empty() && k.gpu != "-") continue;
    auto list = on_host[{k.row.run_id, k.row.row_index, k.host}];
    std::sort(list.begin(), list.end());
    const auto slot = std::lower_bound(list.begin(), list.end(), k.rank) - list.begin();
    k.gpu = k.host + " slot " + std::to_string(slot);
  }
  return out;
}

}  // namespace

std::string_view member_kind_name(MemberKind k) { return k == MemberKind::gpu ? "gpu" : "node"; }

std::optional<MemberKind> member_kind_named(std::string_view name) {
  if (name == "gpu") return MemberKind::gpu;
  if (name == "node") return MemberKind::node;
  return std::nullopt;
}

std::vector<MemberSeries> member_series(const std::vector<RankPoint>& ranks, const std::vector<MemberKind>& kinds) {
  std::vector<MemberSeries> out;
  for (const MemberKind kind : kinds) {
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
