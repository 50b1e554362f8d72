// The text and JSON of `history members` (member_text.h).
#include "history/member_text.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "text/escape.h"
#include "text/number_text.h"

namespace gpuscale::history {
namespace {

std::string t(const std::string& s) { return term_text(s); }
std::string pct(double fraction) { return fmt::format("{:.1f}%", fraction * 100); }
std::string runs(std::size_t n) { return fmt::format("{} run{}", n, n == 1 ? "" : "s"); }

// The row a member's series is in, without the member ("stream.triad dtype=fp64 ... @ 1 GPU").
std::string row_label(const SeriesKey& k) {
  SeriesKey row = k;
  row.host = row.gpu = "";
  return series_label(row);
}

std::string who(const MemberSeries& m) {
  if (m.kind != MemberKind::gpu) return fmt::format("{} {}", member_kind_name(m.kind), t(m.member));
  return fmt::format("gpu {}{}", t(m.member), m.member.rfind(m.host + " ", 0) == 0 ? "" : " (host " + t(m.host) + ")");
}

// "any GPU 4.4% slower than its last 30 runs is named within 3 runs (95%)"
std::string power_text(MemberKind kind, const SelfPower& p) {
  static const char* const names[] = {"GPU", "node", "link", "NIC"};  // by MemberKind
  return fmt::format("any {} {} slower than its last {} is named within {} ({:.0f}%)",
                     names[static_cast<int>(kind)], pct(p.step), runs(p.runs), runs(p.within), p.probability * 100);
}

}  // namespace

std::string members_text(const std::vector<MemberSeries>& members, const std::vector<SelfVerdict>& verdicts) {
  std::string out;
  std::size_t named = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto& r = verdicts[i].regression;
    if (!r) continue;
    ++named;
    const auto& m = members[i];
    out += fmt::format("SLOWER {}: {} (cluster {}): {} {} over {} against {} over its {} before: {} slower (noise {})\n",
                       who(m), t(row_label(m.series.key)), t(m.series.key.cluster), figure_text(r->level), t(m.series.unit),
                       runs(r->runs), figure_text(r->baseline.median), runs(r->baseline.runs), pct(1 - r->change.ratio),
                       pct(verdicts[i].power.sigma));
    std::string changed;
    for (const auto& c : r->change_points) changed += (changed.empty() ? "; software changed there: " : "; ") + t(c);
    out += fmt::format("  changed in run {} ({}){}\n", r->changed->run_id.substr(0, 12), t(r->changed->created_utc), changed);
  }
  // The power by kind: the median series' and the least sensitive one's, each from its own noise.
  std::map<MemberKind, std::vector<std::size_t>> by_kind;
  for (std::size_t i = 0; i < members.size(); ++i)
    if (verdicts[i].power.known) by_kind[members[i].kind].push_back(i);
  for (auto& [kind, list] : by_kind) {
    std::sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) { return verdicts[a].power.step < verdicts[b].power.step; });
    const auto& mid = verdicts[list[list.size() / 2]].power;
    const std::size_t worst = list.back();
    out += fmt::format("power, {} ({} series, each from its own run-to-run noise): {} (the median series, noise {}); the "
                       "least sensitive: {} {} ({})\n",
                       member_kind_name(kind), list.size(), power_text(kind, mid), pct(mid.sigma), who(members[worst]),
                       pct(verdicts[worst].power.step), t(row_label(members[worst].series.key)));
  }
  const std::size_t unknown = static_cast<std::size_t>(std::count_if(verdicts.begin(), verdicts.end(), [](const SelfVerdict& v) { return !v.power.known; }));
  out += fmt::format("{} of {} member series stepped down beyond their own noise{}\n", named, members.size(),
                     unknown ? fmt::format(" ({} with too few runs to judge)", unknown) : "");
  return out;
}

nlohmann::json members_json(const std::vector<MemberSeries>& members, const std::vector<SelfVerdict>& verdicts) {
  nlohmann::json list = nlohmann::json::array();
  std::size_t named = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto& m = members[i];
    const auto& v = verdicts[i];
    nlohmann::json j = {{"kind", member_kind_name(m.kind)}, {"member", m.member}, {"host", m.host},
                        {"cluster", m.series.key.cluster}, {"benchmark", m.series.key.benchmark},
                        {"params", nlohmann::json::parse(m.series.key.params, nullptr, false)},
                        {"gpu_count", m.series.key.gpu_count}, {"unit", m.series.unit}, {"runs", m.series.points.size()}};
    j["power"] = v.power.known ? nlohmann::json{{"step", v.power.step}, {"within_runs", v.power.within},
                                                {"probability", v.power.probability}, {"against_runs", v.power.runs},
                                                {"noise", v.power.sigma}}
                               : nlohmann::json(nullptr);
    j["slower"] = nullptr;
    if (const auto& r = v.regression) {
      ++named;
      j["slower"] = {{"fraction", 1 - r->change.ratio}, {"level", r->level}, {"runs", r->runs},
                     {"baseline", r->baseline.median}, {"baseline_runs", r->baseline.runs},
                     {"changed_in", {{"run", r->changed->run_id}, {"created_utc", r->changed->created_utc}}},
                     {"change_points", r->change_points}};
    }
    list.push_back(std::move(j));
  }
  return {{"members", list}, {"named", named}};
}

}  // namespace gpuscale::history
