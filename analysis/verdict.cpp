#include "analysis/verdict.h"

#include <iterator>
#include <map>

#include <fmt/format.h>

#include "analysis/outliers.h"

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

// The members' kinds in the order the power text lists them.
int member_order(const std::string& members) {
  static const char* kOrder[] = {"GPU", "node", "node's rail", "GPU pair link", "node pair", "rail link"};
  for (int i = 0; i < static_cast<int>(std::size(kOrder)); ++i)
    if (members == kOrder[i]) return i;
  return static_cast<int>(std::size(kOrder));  // groups of N GPUs, after
}

std::string pct(double f) { return fmt::format("{:.1f}%", 100 * f); }

}  // namespace

std::string power_text(const nlohmann::json& power, std::vector<std::string>* no_bar) {
  if (!power.is_array() || power.empty()) return "";
  // Per kind of member, per benchmark (with its type): the weakest population's bar.
  std::map<std::pair<int, std::string>, std::map<std::string, double>> worst;
  for (const auto& e : power) {
    if (!e.is_object() || !member(e, "detectable").is_number()) continue;
    const auto members = string_of(e, "members");
    auto what = string_of(e, "benchmark");
    if (const auto& dtype = member(member(e, "params"), "dtype"); dtype.is_string()) what += " " + dtype.get<std::string>();
    auto& d = worst[{member_order(members), members}][what];
    d = std::max(d, member(e, "detectable").get<double>());
  }
  std::vector<std::string> parts;
  for (const auto& [key, by_benchmark] : worst) {
    std::vector<std::string> items;
    for (const auto& [what, d] : by_benchmark) {
      if (d > kUsefulBar) {
        if (no_bar) no_bar->push_back(fmt::format("{} in {} ({})", key.second, what, pct(d)));
        continue;
      }
      items.push_back(fmt::format("{} in {}", pct(d), what));
    }
    if (!items.empty()) parts.push_back(fmt::format("no {} slower than {}", key.second, join(items)));
  }
  if (parts.empty()) return fmt::format("no bar under {:.0f}%: this run cannot tell a slow member from noise", 100 * kUsefulBar);
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out + " (95% power)";
}

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
  v.power = power_text(member(analysis, "power"), &v.no_bar);
  if (!v.no_bar.empty()) {
    // The first few by name (a terminal cuts a reason past its length), the rest counted.
    constexpr std::size_t kNamed = 3;
    std::vector<std::string> named(v.no_bar.begin(), v.no_bar.begin() + static_cast<std::ptrdiff_t>(std::min(kNamed, v.no_bar.size())));
    if (v.no_bar.size() > kNamed) named.push_back(fmt::format("{} more", v.no_bar.size() - kNamed));
    raise(v, VerdictLevel::warn,
          fmt::format("no bar under {:.0f}% for {}: this run cannot tell a slow member from noise", 100 * kUsefulBar,
                      join(named)));
  }
  if (stragglers) raise(v, VerdictLevel::warn, fmt::format("{} straggler(s)", stragglers));
  if (const auto& complete = member(member(doc, "summary"), "complete"); complete.is_boolean() && !complete.get<bool>())
    raise(v, VerdictLevel::warn, "the run did not complete");
  return v;
}

std::string format_verdict(const RunVerdict& v) {
  std::string out = fmt::format("verdict: {}", verdict_word(v.level));
  if (!v.reasons.empty()) out += ": " + term_text(join(v.reasons));
  // A clean verdict says what it would have caught; otherwise that stays beside the reasons.
  if (v.level == VerdictLevel::pass && !v.power.empty()) out += ": " + term_text(v.power);
  out += "\n  outliers: " + term_text(v.outliers) + "\n";
  if (v.level != VerdictLevel::pass && !v.power.empty()) out += "  power: " + term_text(v.power) + "\n";
  if (v.drain_known) out += "  drain list: " + (v.drain.empty() ? std::string("empty") : term_text(join(v.drain))) + "\n";
  return out + "  GPU health: " + term_text(v.health) + "\n";
}

}  // namespace gpuscale
