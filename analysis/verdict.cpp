#include "analysis/verdict.h"

#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/row_text.h"

namespace gpuscale {
namespace {

const nlohmann::json& member(const nlohmann::json& o, const char* key) {
  static const nlohmann::json none;
  return o.is_object() && o.contains(key) ? o[key] : none;
}
long long count_of(const nlohmann::json& counts, const char* key) {
  const auto& v = member(counts, key);
  return v.is_number_integer() ? v.get<long long>() : 0;
}
std::string string_of(const nlohmann::json& o, const char* key) {
  const auto& v = member(o, key);
  return v.is_string() ? v.get<std::string>() : "";
}

void raise(RunVerdict& v, VerdictLevel level, std::string reason) {
  if (level > v.level) v.level = level;
  // FAIL reasons first: they are what a reader acts on.
  if (level == VerdictLevel::fail) v.reasons.insert(v.reasons.begin(), std::move(reason));
  else v.reasons.push_back(std::move(reason));
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::string_view verdict_word(VerdictLevel level) {
  switch (level) {
    case VerdictLevel::pass: return "PASS";
    case VerdictLevel::warn: return "WARN";
    case VerdictLevel::fail: return "FAIL";
  }
  return "FAIL";
}

RunVerdict run_verdict(const nlohmann::json& doc, const std::vector<ResultRow>& rows, std::size_t stragglers) {
  RunVerdict v;
  std::size_t problems = 0;
  for (const auto& r : rows) problems += row_is_problem(r);
  if (problems) raise(v, VerdictLevel::fail, fmt::format("{} measurement(s) invalid or failed", problems));

  const auto& analysis = member(doc, "analysis");
  const auto& outliers = member(analysis, "outliers");
  if (!outliers.is_array()) v.outliers = "not analysed (no analysis.outliers in the file)";
  else if (outliers.empty()) v.outliers = "none";
  else {
    v.outliers = std::to_string(outliers.size());
    raise(v, VerdictLevel::fail, fmt::format("{} outlier(s)", outliers.size()));
  }
  if (const auto& hosts = member(analysis, "outlier_hosts"); hosts.is_array()) {
    v.drain_known = true;
    for (const auto& h : hosts)
      if (h.is_string()) v.drain.push_back(h.get<std::string>());
  }

  const auto& health = member(doc, "health");
  if (!health.is_object()) v.health = "not recorded";
  else if (string_of(health, "telemetry") == "unavailable") v.health = "telemetry unavailable (" + string_of(health, "reason") + ")";
  else {
    const auto& c = member(health, "counts");
    const long long fails = count_of(c, "FAIL"), warns = count_of(c, "WARN");
    v.health = fmt::format("{} FAIL, {} WARN, {} PASS", fails, warns, count_of(c, "PASS"));
    if (fails) raise(v, VerdictLevel::fail, fmt::format("{} GPU(s) with health FAIL", fails));
    if (warns) raise(v, VerdictLevel::warn, fmt::format("{} GPU(s) with health WARN", warns));
  }
  if (stragglers) raise(v, VerdictLevel::warn, fmt::format("{} straggler(s)", stragglers));
  if (const auto& complete = member(member(doc, "summary"), "complete"); complete.is_boolean() && !complete.get<bool>())
    raise(v, VerdictLevel::warn, "the run did not complete");
  return v;
}

std::string format_verdict(const RunVerdict& v) {
  std::string out = fmt::format("verdict: {}", verdict_word(v.level));
  if (!v.reasons.empty()) out += ": " + term_text(join(v.reasons));
  out += "\n  outliers: " + term_text(v.outliers) + "\n";
  if (v.drain_known) out += "  drain list: " + (v.drain.empty() ? std::string("empty") : term_text(join(v.drain))) + "\n";
  return out + "  GPU health: " + term_text(v.health) + "\n";
}

}  // namespace gpuscale
