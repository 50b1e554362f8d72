#include "health/dcgm/dcgm_verdict.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/term_text.h"

namespace gpuscale::health {
namespace {

constexpr std::size_t kQuoted = 300;  // DCGM's words kept per message

std::string words(const std::string& s) { return terminal_quote(s, kQuoted); }

std::string warning_text(const DcgmWarning& w) {
  return w.error_id ? fmt::format("{} (DCGM error {})", words(w.text), *w.error_id) : words(w.text);
}

nlohmann::json warnings_json(const std::vector<DcgmWarning>& ws) {
  auto out = nlohmann::json::array();
  for (const auto& w : ws) {
    auto opt = [](const std::optional<long long>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    out.push_back({{"warning", utf8_escaped(w.text)},
                   {"error_id", opt(w.error_id)},
                   {"error_category", opt(w.error_category)},
                   {"error_severity", opt(w.error_severity)}});
  }
  return out;
}

// The severity of a "Fail" or "Warn" (the module comment's rule).
Severity severity_of(const std::string& status, const std::vector<DcgmWarning>& ws, const DcgmRules& rules) {
  if (status == "Warn") return rules.warn;
  const bool all_monitor = !ws.empty() && std::all_of(ws.begin(), ws.end(), [](const DcgmWarning& w) {
    return w.error_severity == kDcgmErrorMonitor;
  });
  return all_monitor ? rules.fail_monitor_only : rules.fail;
}

std::string finding_text(int level, const std::string& test, const std::vector<DcgmWarning>& ws,
                         const std::vector<std::string>& info, const std::string& status) {
  std::vector<std::string> parts;
  for (const auto& w : ws) parts.push_back(warning_text(w));
  if (parts.empty())
    for (const auto& i : info) parts.push_back(words(i));
  if (parts.empty()) return fmt::format("DCGM r{} {}: {} (DCGM gives no reason)", level, words(test), status);
  return fmt::format("DCGM r{} {}: {}", level, words(test), fmt::join(parts, "; "));
}

struct Match {
  std::map<int, int> by_dcgm_id;  // DCGM GPU id -> position in our list
  std::string how;
};

Match match_gpus(const DcgmDiag& d, const std::vector<GpuIdentity>& gpus) {
  Match m;
  std::set<std::string> ours;
  bool ours_unique = true, ours_all = true;
  for (const auto& g : gpus) {
    if (!g.serial || g.serial->empty()) ours_all = false;
    else if (!ours.insert(*g.serial).second) ours_unique = false;
  }
  const bool dcgm_all = !d.gpu_ids.empty() && std::all_of(d.gpu_ids.begin(), d.gpu_ids.end(), [&](int id) {
    return d.serials.count(id) && !d.serials.at(id).empty();
  });
  if (dcgm_all && ours_all && ours_unique && !gpus.empty()) {
    m.how = "serial number";
    for (int id : d.gpu_ids)
      for (std::size_t i = 0; i < gpus.size(); ++i)
        if (*gpus[i].serial == d.serials.at(id)) m.by_dcgm_id[id] = static_cast<int>(i);
    return m;
  }
  m.how = !dcgm_all           ? "index (DCGM gives no serial number for every GPU)"
          : !ours_all         ? "index (NVML reads no serial number for every GPU)"
                              : "index (the GPUs' serial numbers are not unique on this node)";
  for (int id : d.gpu_ids)
    for (std::size_t i = 0; i < gpus.size(); ++i)
      if (gpus[i].index == id) m.by_dcgm_id[id] = static_cast<int>(i);
  return m;
}

std::optional<std::string> run_problem(const DcgmRequest& req, const ProgramRun& run) {
  const auto cmd = fmt::format("dcgmi diag -r {} -j", req.level);
  if (!run.started) return fmt::format("{} could not start: {}", cmd, run.why_not_started);
  if (run.timed_out) return fmt::format("{} did not finish in {:g} s: killed (--dcgm-timeout)", cmd, req.timeout_s);
  if (run.too_much_output)
    return fmt::format("{} printed more than {} MiB: killed", cmd, kMaxDcgmOutputBytes >> 20);
  if (run.signal) return fmt::format("{} was ended by signal {}", cmd, *run.signal);
  return std::nullopt;
}

// The first non-empty line of what the program said, for a message.
std::string first_line(const ProgramRun& run) {
  for (const auto* s : {&run.err_tail, &run.out}) {
    std::size_t start = 0;
    while (start < s->size()) {
      const auto end = std::min(s->find('\n', start), s->size());
      const auto line = s->substr(start, end - start);
      if (line.find_first_not_of(" \t\r") != std::string::npos) return words(line);
      start = end + 1;
    }
  }
  return "(no output)";
}

}  // namespace

int parse_dcgm_level(const std::string& text) {
  if (text.size() == 2 && text[0] == 'r' && text[1] >= '1' && text[1] <= '4') return text[1] - '0';
  throw Error(fmt::format("invalid --dcgm '{}': expected r1, r2, r3 or r4 (dcgmi diag -r 1..4)", terminal_quote(text)), 5);
}

double default_dcgm_timeout_s(int level) {
  switch (level) {
    case 1: return 300;
    case 2: return 900;
    case 3: return 3600;
    default: return 4 * 3600;
  }
}

std::vector<std::string> dcgm_diag_args(int level) { return {"diag", "-r", std::to_string(level), "-j"}; }

DcgmOutcome judge_dcgm_run(const DcgmRequest& req, const std::string& program, const ProgramRun& run,
                           const std::vector<GpuIdentity>& gpus, const DcgmRules& rules) {
  DcgmOutcome o;
  o.level = req.level;
  o.program = program;
  auto& s = o.summary;
  s = {{"level", req.level},
       {"command", fmt::format("dcgmi diag -r {} -j", req.level)},
       {"program", utf8_escaped(program)},
       {"timeout_s", req.timeout_s},
       {"seconds", run.seconds},
       {"exit_status", run.exit_status ? nlohmann::json(*run.exit_status) : nlohmann::json(nullptr)}};
  auto finish = [&](const std::string& problem) {
    o.problem = problem;
    o.gpus.clear();
    s["status"] = "not read";
    s["problem"] = problem;
    return o;
  };
  if (auto p = run_problem(req, run)) return finish(*p);
  const int exit_status = run.exit_status.value_or(0);  // it exited: run_problem saw no other end
  DcgmDiag d;
  try {
    d = parse_dcgm_diag(run.out);
  } catch (const std::exception& e) {
    if (exit_status != 0)
      return finish(fmt::format("dcgmi diag -r {} -j exited {}: {}", req.level, exit_status, first_line(run)));
    return finish(message_line(e.what()));
  }
  s["format"] = d.format;
  s["version"] = d.version ? nlohmann::json(utf8_escaped(*d.version)) : nlohmann::json(nullptr);
  s["driver"] = d.driver ? nlohmann::json(utf8_escaped(*d.driver)) : nlohmann::json(nullptr);
  if (d.runtime_error)
    return finish(fmt::format("dcgmi diag -r {} -j could not run the diagnostic: {}", req.level, words(*d.runtime_error)));
  const bool node_outcomes = std::any_of(d.tests.begin(), d.tests.end(), [](const DcgmTestSummary& t) {
    return !t.has_gpu_results && !t.status.empty();
  });
  if (d.results.empty() && !node_outcomes)
    return finish(fmt::format("dcgmi diag -r {} -j reported no result{}", req.level,
                              exit_status != 0 ? fmt::format(" (exit {})", exit_status) : std::string()));

  const auto m = match_gpus(d, gpus);
  o.matched_by = m.how;
  o.gpus.resize(gpus.size());
  bool any_bad = false;
  for (const auto& r : d.results) {
    const auto it = m.by_dcgm_id.find(r.gpu_id);
    if (it == m.by_dcgm_id.end()) continue;  // a DCGM GPU that is none of ours: noted below
    auto& g = o.gpus[static_cast<std::size_t>(it->second)];
    g.tests.push_back({{"category", utf8_escaped(r.category)}, {"test", utf8_escaped(r.test)}, {"status", r.status},
                       {"dcgm_gpu_id", r.gpu_id}, {"warnings", warnings_json(r.warnings)}, {"info", nlohmann::json::array()}});
    for (const auto& i : r.info) g.tests.back()["info"].push_back(utf8_escaped(i));
    if (r.status == "Pass") {
      ++g.passed;
    } else if (r.status == "Skip") {
      ++g.skipped;
      std::vector<std::string> why;
      for (const auto& i : r.info) why.push_back(words(i));
      for (const auto& w : r.warnings) why.push_back(warning_text(w));
      g.verdict.note(fmt::format("DCGM r{} {} skipped{}", req.level, words(r.test),
                                 why.empty() ? std::string() : fmt::format(": {}", fmt::join(why, "; "))));
    } else {
      any_bad = true;
      const auto sev = severity_of(r.status, r.warnings, rules);
      (sev == Severity::fail ? g.failed : g.warned)++;
      g.verdict.add("dcgm", sev, finding_text(req.level, r.test, r.warnings, r.info, r.status));
    }
  }
  // Warnings of a test that name no GPU hold for all of them.
  for (const auto& t : d.tests) {
    if (t.has_gpu_results || t.status.empty() || t.status == "Pass") continue;
    if (t.status == "Skip") {
      o.node.note(fmt::format("DCGM r{} {} skipped", req.level, words(t.test)));
      continue;
    }
    any_bad = true;
    o.node.add("dcgm", severity_of(t.status, t.warnings, rules), finding_text(req.level, t.test, t.warnings, {}, t.status));
  }
  std::vector<int> unmatched;
  for (int id : d.gpu_ids)
    if (!m.by_dcgm_id.count(id)) unmatched.push_back(id);
  if (!unmatched.empty())
    o.node.note(fmt::format("DCGM r{} tested GPU id{} {} that match{} none of this node's GPUs (by {})", req.level,
                            unmatched.size() > 1 ? "s" : "", fmt::join(unmatched, ", "),
                            unmatched.size() > 1 ? "" : "es", m.how));
  for (auto& g : o.gpus)
    if (g.tests.empty() && !d.results.empty())  // (DCGM 3.x's r1 has no per-GPU result at all)
      g.verdict.add("dcgm", rules.gpu_without_result,
                    fmt::format("DCGM r{} reported no result for this GPU (DCGM's GPU ids: {}; matched by {})", req.level,
                                fmt::join(d.gpu_ids, ", "), m.how));
  if (exit_status != 0 && !any_bad)
    o.node.add("dcgm", rules.exit_without_failure,
               fmt::format("dcgmi diag -r {} -j exited {} although no result failed: {}", req.level, exit_status,
                           first_line(run)));
  s["status"] = "read";
  s["problem"] = nullptr;
  s["matched_by"] = m.how;
  s["gpu_ids"] = d.gpu_ids;
  s["unmatched_gpu_ids"] = unmatched;
  s["other_entity_results"] = d.other_entity_results;
  return o;
}

std::string dcgm_line_part(int level, const DcgmGpuOutcome& g) {
  std::vector<std::string> parts;
  if (g.passed) parts.push_back(fmt::format("{} Pass", g.passed));
  if (g.warned) parts.push_back(fmt::format("{} Warn", g.warned));
  if (g.failed) parts.push_back(fmt::format("{} Fail", g.failed));
  if (g.skipped) parts.push_back(fmt::format("{} Skip", g.skipped));
  if (parts.empty()) parts.push_back("no result");
  return fmt::format(" [DCGM r{}: {}]", level, fmt::join(parts, ", "));
}

}  // namespace gpuscale::health
