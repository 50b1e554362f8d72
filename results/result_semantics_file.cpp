// The semantic validator's file-wide checks (results/result_semantics.h): the header against itself
// and against what the rows said.
#include "results/result_semantics.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/term_text.h"
#include "core/utc_time.h"

namespace gpuscale {
namespace {

using nlohmann::json;

const json& member(const json& j, const char* key) {
  static const json none;
  return j.is_object() && j.contains(key) ? j.at(key) : none;
}

std::string quoted(const json& v) { return v.is_string() ? terminal_quote(v.get<std::string>()) : terminal_quote(v.dump(), 40); }

}  // namespace

SemanticReport ResultChecker::finish(const json& header) {
  auto file = [&](std::string what) { add(std::move(what), std::nullopt); };
  const bool merged = header.contains("merged_from");
  const auto world = member(member(header, "mpi"), "world_size").is_number_integer()
                         ? member(member(header, "mpi"), "world_size").get<long long>()
                         : 0;

  // Times on the calendar, the end after the start.
  auto check_time = [&](const json& t, const std::string& where) {
    if (t.is_string() && !is_utc_timestamp(t.get<std::string>())) file(fmt::format("{}: {} is not a time on the calendar", where, quoted(t)));
  };
  check_time(member(header, "created_utc"), "/created_utc");
  check_time(member(header, "finished_utc"), "/finished_utc");
  if (member(header, "created_utc").is_string() && member(header, "finished_utc").is_string() &&
      header.at("finished_utc").get<std::string>() < header.at("created_utc").get<std::string>())
    file(fmt::format("/finished_utc {} is before /created_utc {}", quoted(header.at("finished_utc")), quoted(header.at("created_utc"))));
  const json& attempts = member(header, "attempts");
  for (std::size_t a = 0; attempts.is_array() && a < attempts.size(); ++a) {
    check_time(member(attempts[a], "created_utc"), fmt::format("/attempts/{}/created_utc", a));
    check_time(member(attempts[a], "finished_utc"), fmt::format("/attempts/{}/finished_utc", a));
  }
  const json& inputs = member(header, "merged_from");
  for (std::size_t m = 0; inputs.is_array() && m < inputs.size(); ++m)
    check_time(member(inputs[m], "created_utc"), fmt::format("/merged_from/{}/created_utc", m));

  // Ranks: 0 .. world_size - 1 once each, on hosts the header names; hosts[].ranks the same placing.
  const json& ranks = member(header, "ranks");
  const json& hosts = member(header, "hosts");
  std::map<std::string, std::vector<long long>> on_host;  // host -> ranks, from ranks[]
  std::map<std::string, std::size_t> host_index;
  for (std::size_t h = 0; hosts.is_array() && h < hosts.size(); ++h) {
    const json& name = member(hosts[h], "name");
    if (!name.is_string()) continue;
    if (!host_index.emplace(name.get<std::string>(), h).second) file(fmt::format("/hosts/{}: host {} is listed twice", h, quoted(name)));
  }
  // Each rank's entry; a world larger than its list (itself a contradiction) keeps no more slots.
  std::vector<const json*> rank_entry(ranks.is_array() ? std::min<std::size_t>(ranks.size(), std::max<long long>(world, 0)) : 0, nullptr);
  auto entry_of = [&](long long rank) -> const json* {
    return rank >= 0 && static_cast<std::size_t>(rank) < rank_entry.size() ? rank_entry[static_cast<std::size_t>(rank)] : nullptr;
  };
  if (ranks.is_array() && static_cast<long long>(ranks.size()) != world)
    file(fmt::format("/mpi/world_size is {}, but /ranks lists {} ranks", world, ranks.size()));
  for (std::size_t i = 0; ranks.is_array() && i < ranks.size(); ++i) {
    const json& r = ranks[i];
    const long long rank = member(r, "rank").is_number_integer() ? member(r, "rank").get<long long>() : -1;
    if (rank < 0 || rank >= world) {
      file(fmt::format("/ranks/{}: rank {} in a world of {}", i, rank, world));
      continue;
    }
    if (entry_of(rank)) file(fmt::format("/ranks/{}: rank {} is listed twice", i, rank));
    else if (static_cast<std::size_t>(rank) < rank_entry.size()) rank_entry[static_cast<std::size_t>(rank)] = &r;
    const json& host = member(r, "host");
    if (!host.is_string()) continue;
    if (!host_index.count(host.get<std::string>())) file(fmt::format("/ranks/{}: host {} is not in /hosts", i, quoted(host)));
    on_host[host.get<std::string>()].push_back(rank);
  }
  for (std::size_t h = 0; hosts.is_array() && h < hosts.size(); ++h) {
    const json& name = member(hosts[h], "name");
    const json& listed = member(hosts[h], "ranks");
    if (!name.is_string() || !listed.is_array()) continue;
    std::vector<long long> theirs;
    for (const auto& r : listed)
      if (r.is_number_integer()) theirs.push_back(r.get<long long>());
    std::sort(theirs.begin(), theirs.end());
    auto mine = on_host[name.get<std::string>()];
    std::sort(mine.begin(), mine.end());
    if (theirs != mine)
      file(fmt::format("/hosts/{}/ranks: host {} lists {} rank{}, but /ranks places {} there", h, quoted(name), theirs.size(),
                       theirs.size() == 1 ? "" : "s", mine.size()));
  }

  // What only a file gpuscale import made may leave unknown (the schema allows null for it): a run
  // gpuscale made, or merged, knows its GPUs' memory and its seed, and names no "import" cluster source.
  if (!header.contains("imported") && !merged) {
    for (std::size_t i = 0; ranks.is_array() && i < ranks.size(); ++i)
      for (const char* k : {"memory_bytes", "free_memory_bytes"})
        if (member(ranks[i], "device").contains(k) && member(member(ranks[i], "device"), k).is_null())
          file(fmt::format("/ranks/{}/device/{}: null, which only an imported file may leave", i, k));
    if (member(header, "plan").contains("seed") && member(member(header, "plan"), "seed").is_null())
      file("/plan/seed: null, which only an imported file may leave");
    if (member(member(header, "cluster"), "source") == json("import")) file("/cluster/source: \"import\" in a file gpuscale import did not make");
  }

  // Rows against the header: hosts named, ranks inside the world and where the header places them.
  if (!merged)
    for (const auto& [id, p] : placements_) {
      const auto rank = id % (static_cast<long long>(INT_MAX) + 1);
      const json* entry = id > INT_MAX ? nullptr : entry_of(rank);
      if (entry && member(*entry, "host") != json(p.host))
        add(fmt::format("/results/{}: rank {} is on host {}, but /ranks places it on {}", p.row, rank, terminal_quote(p.host),
                        quoted(member(*entry, "host"))),
            p.row);
    }
  const json& plan = member(header, "plan");
  const json& benchmarks = member(plan, "benchmarks");
  const json& point_list = member(plan, "point_list");
  const json& gpu_counts = member(plan, "gpu_counts");
  std::map<std::string, std::pair<bool, std::set<int>>> planned;  // point -> (whole_job, counts with a row)
  if (point_list.is_array()) {
    for (std::size_t k = 0; k < point_list.size(); ++k) {
      const json& b = member(point_list[k], "benchmark");
      const auto point = fmt::format("{}|{}", b.is_string() ? b.get<std::string>() : "", member(point_list[k], "params").dump());
      if (!planned.emplace(point, std::make_pair(member(point_list[k], "whole_job") == json(true), std::set<int>())).second)
        file(fmt::format("/plan/point_list/{}: the same point as an earlier entry", k));
    }
    if (member(plan, "points") != json(point_list.size()))
      file(fmt::format("/plan/points is {}, but /plan/point_list lists {}", quoted(member(plan, "points")), point_list.size()));
  }
  std::size_t count[4] = {0, 0, 0, 0};
  const std::size_t n_inputs = inputs.is_array() ? inputs.size() : 0;
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    const RowFacts& r = rows_[i];
    auto say = [&](std::string what) { add(fmt::format("/results/{}: {}", i, what), i); };
    ++count[static_cast<int>(r.status)];
    if (r.gpu_count > world) add(fmt::format("/results/{}: gpu_count {} in a world of {} ranks", i, r.gpu_count, world), i, true);
    if (r.top_rank >= world) add(fmt::format("/results/{}: rank {} in a world of {} ranks", i, r.top_rank, world), i, true);
    // An ok row measured on gpu_count ranks lists every one of them (a tiled count lists more: each group's).
    if (r.status == RowStatus::ok && r.listed < static_cast<std::size_t>(std::max(r.gpu_count, 0)))
      add(fmt::format("/results/{}: an ok row at {} GPUs lists {} rank{}", i, r.gpu_count, r.listed, r.listed == 1 ? "" : "s"), i, true);
    if (r.node_members > host_index.size())
      say(fmt::format("a pair matrix of {} nodes in a file of {} hosts", r.node_members, host_index.size()));
    if (benchmarks.is_array() && std::find(benchmarks.begin(), benchmarks.end(), json(r.benchmark)) == benchmarks.end())
      say(fmt::format("benchmark {} is not in /plan/benchmarks", terminal_quote(r.benchmark)));
    if (gpu_counts.is_array() && r.gpu_count != world &&
        std::find(gpu_counts.begin(), gpu_counts.end(), json(r.gpu_count)) == gpu_counts.end())
      say(fmt::format("gpu_count {} is not one of /plan/gpu_counts", r.gpu_count));
    if (point_list.is_array()) {
      auto it = planned.find(r.point);
      if (it == planned.end()) say("its benchmark and params are not in /plan/point_list");
      else it->second.second.insert(r.gpu_count);
    }
    const std::size_t earlier = attempts.is_array() ? attempts.size() : 0;
    if (r.attempt < 0 || static_cast<std::size_t>(r.attempt) > earlier)
      say(fmt::format("attempt {}, but the file records {} earlier attempt{}", r.attempt, earlier, earlier == 1 ? "" : "s"));
    if (merged && !r.input) say("a merged file's row without its input");
    if (!merged && r.input) say(fmt::format("input {} in a file that merged nothing", *r.input));
    if (merged && r.input && (*r.input < 0 || static_cast<std::size_t>(*r.input) >= n_inputs))
      say(fmt::format("input {}, but /merged_from lists {}", *r.input, n_inputs));
    else if (merged && r.input && member(inputs[static_cast<std::size_t>(*r.input)], "status") != json("merged"))
      say(fmt::format("input {}, which /merged_from says was not merged", *r.input));
  }

  // Hosts the rows name and the header does not: one line, the first few named.
  std::vector<std::string> unknown;
  std::size_t unnamed = 0;
  for (const auto& h : row_hosts_)
    if (!host_index.count(h) && unnamed++ < 3) unknown.push_back(terminal_quote(h));
  if (unnamed)
    file(fmt::format("/results: rows name {} host{} that /hosts does not: {}{}", unnamed, unnamed == 1 ? "" : "s",
                     fmt::join(unknown, ", "), unnamed > unknown.size() ? ", ..." : ""));

  // The summary tells what the rows say.
  const json& s = member(header, "summary");
  const char* names[4] = {"ok", "invalid", "failed", "skipped"};
  for (int k = 0; k < 4; ++k) {
    const auto st = parse_row_status(names[k]);
    const std::size_t n = count[static_cast<int>(*st)];
    if (member(s, names[k]) != json(n)) file(fmt::format("/summary/{} is {}, but {} row{} {}", names[k], quoted(member(s, names[k])), n, n == 1 ? "" : "s", names[k]));
  }
  if (member(s, "rows") != json(rows_.size())) file(fmt::format("/summary/rows is {}, but the file holds {} rows", quoted(member(s, "rows")), rows_.size()));
  const bool valid = count[static_cast<int>(RowStatus::invalid)] == 0 && count[static_cast<int>(RowStatus::failed)] == 0;
  if (member(s, "valid") != json(valid))
    file(fmt::format("/summary/valid is {}, but {} row is invalid or failed", quoted(member(s, "valid")), valid ? "no" : "a"));
  const bool complete = member(s, "complete") == json(true);
  if (member(s, "exit_code") == json(0) && (!valid || !complete))
    file(fmt::format("/summary/exit_code is 0, but the run is {}", valid ? "not complete" : "not valid"));
  if (complete) {
    if (!member(s, "interrupted").is_null()) file("/summary/complete is true, but the run was interrupted");
    if (member(header, "finished_utc").is_null()) file("/summary/complete is true, but /finished_utc is null");
    for (const char* ending : {"stalled", "lost_rank"})
      if (s.contains(ending)) file(fmt::format("/summary/complete is true beside /summary/{}", ending));
    for (const auto& [point, p] : planned) {
      const auto& [whole_job, measured] = p;
      // A point measured once at the job's size: marked whole_job, or in files written before that mark
      // (2026-12-04) a point of the fleet benchmarks, the only ones measured so.
      const bool whole = whole_job || point.rfind("pairs.", 0) == 0 || point.rfind("gpu_pairs.", 0) == 0;
      std::size_t missing = 0;
      if (whole) missing = measured.count(static_cast<int>(world)) ? 0 : 1;
      else
        for (const auto& k : gpu_counts)
          if (k.is_number_integer() && !measured.count(k.get<int>())) ++missing;
      if (missing)
        file(fmt::format("/summary/complete is true, but planned point {} has {} GPU count{} without a row",
                         terminal_quote(point, 120), missing, missing == 1 ? "" : "s"));
    }
  }

  // The analysis names ranks, hosts and rows of this file.
  const json& analysis = member(header, "analysis");
  const json& stragglers = member(analysis, "stragglers");
  for (std::size_t k = 0; stragglers.is_array() && k < stragglers.size(); ++k) {
    const json& st = stragglers[k];
    const long long rank = member(st, "rank").is_number_integer() ? member(st, "rank").get<long long>() : -1;
    const std::string key = fmt::format("{}|{}|{}", member(st, "benchmark").is_string() ? st.at("benchmark").get<std::string>() : "",
                                        member(st, "params").dump(), member(st, "gpu_count").dump());
    if (rank < 0 || rank >= world) file(fmt::format("/analysis/stragglers/{}: rank {} in a world of {}", k, rank, world));
    else if (const json* entry = entry_of(rank); !merged && entry && member(*entry, "host") != member(st, "host"))
      file(fmt::format("/analysis/stragglers/{}: rank {} on host {}, but /ranks places it on {}", k, rank, quoted(member(st, "host")),
                       quoted(member(*entry, "host"))));
    if (!first_row_of_key_.count(key)) file(fmt::format("/analysis/stragglers/{}: no row of that benchmark, params and gpu_count", k));
  }
  const json& outliers = member(analysis, "outliers");
  for (std::size_t k = 0; outliers.is_array() && k < outliers.size(); ++k) {
    for (const auto& r : member(outliers[k], "ranks"))
      if (!r.is_number_integer() || r.get<long long>() >= world)
        file(fmt::format("/analysis/outliers/{}: rank {} in a world of {}", k, quoted(r), world));
    for (const auto& h : member(outliers[k], "hosts"))
      if (!h.is_string() || !host_index.count(h.get<std::string>()))
        file(fmt::format("/analysis/outliers/{}: host {} is not in /hosts", k, quoted(h)));
  }
  for (const auto& h : member(analysis, "outlier_hosts"))
    if (!h.is_string() || !host_index.count(h.get<std::string>()))
      file(fmt::format("/analysis/outlier_hosts: host {} is not in /hosts", quoted(h)));

  auto& rows = report_.untrusted_rows;
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return std::move(report_);
}

std::string refusal_line(const SemanticReport& r, const std::string& file) {
  const auto& first = r.found.front();
  return fmt::format("{}: contradicts itself: {} (`gpuscale validate {}` lists every contradiction)", terminal_safe(file),
                     first.text, terminal_safe(file));
}

}  // namespace gpuscale
