#include "analysis/reference.h"

#include <fnmatch.h>

#include <algorithm>

#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/row_text.h"
#include "core/error.h"
#include "core/shown_text.h"
#include "core/term_text.h"
#include "results/result_io.h"
#include "text/number_text.h"

namespace gpuscale {
namespace {

constexpr std::uintmax_t kMaxReferenceBytes = 64ULL << 20;

// fnmatch reads C strings: a NUL (an escaped \u0000 in a file) would end the text early, so "vm\0evil" would
// match "vm". A pattern or text holding one matches nothing.
bool glob(const std::string& pattern, const std::string& text) {
  if (pattern.find('\0') != std::string::npos || text.find('\0') != std::string::npos) return false;
  return ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

std::string text_of(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

struct Reader {
  const std::string& label;
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw Error(fmt::format("{}: {}: {}", label, where, what));
  }
  std::optional<double> fraction(const nlohmann::json& e, const char* key, const std::string& where) const {
    if (!e.contains(key) || e[key].is_null()) return std::nullopt;
    if (!e[key].is_number() || e[key].get<double>() < 0)
      fail(where + "." + key,
           "must be null or a fraction >= 0 (gpuscale writes lower 0.1 for 10% below, where ReFrame writes -0.1)");
    return e[key].get<double>();
  }
  ReferenceEntry entry(const nlohmann::json& e, const std::string& where) const {
    static const char* allowed[] = {"benchmark", "params", "gpu_count", "value", "lower", "upper", "unit", "comment"};
    if (!e.is_object()) fail(where, "must be an object");
    for (const auto& [k, v] : e.items())
      if (std::find(std::begin(allowed), std::end(allowed), k) == std::end(allowed))
        fail(where, fmt::format("unknown key '{}' (allowed: benchmark, params, gpu_count, value, lower, upper, unit, comment)", k));
    ReferenceEntry r;
    if (!e.contains("benchmark") || !e["benchmark"].is_string() || e["benchmark"].get<std::string>().empty())
      fail(where + ".benchmark", "must be a non-empty string (wildcards allowed)");
    r.benchmark = e["benchmark"].get<std::string>();
    if (e.contains("params")) {
      if (!e["params"].is_object()) fail(where + ".params", "must be an object");
      for (const auto& [k, v] : e["params"].items())
        if (!v.is_string() && !v.is_number() && !v.is_boolean())
          fail(where + ".params." + k, "must be a string (wildcards allowed), number or boolean");
      r.params = e["params"];
    }
    if (e.contains("gpu_count")) {
      const auto& g = e["gpu_count"];
      if (g.is_string() && g.get<std::string>() == "*") r.gpu_count = std::nullopt;
      else if (g.is_number_integer() && g.get<long long>() >= 1 && g.get<long long>() < (1 << 30)) r.gpu_count = g.get<int>();
      else fail(where + ".gpu_count", "must be a positive integer or \"*\"");
    }
    if (!e.contains("value") || !e["value"].is_number() || e["value"].get<double>() < 0)
      fail(where + ".value", "must be a number >= 0");
    r.value = e["value"].get<double>();
    r.lower = fraction(e, "lower", where);
    r.upper = fraction(e, "upper", where);
    if (r.lower && *r.lower > 1) fail(where + ".lower", "must be at most 1 (a fraction of the value)");
    if (!e.contains("unit") || !e["unit"].is_string() || e["unit"].get<std::string>().empty())
      fail(where + ".unit", "must be a non-empty string (e.g. \"GB/s\")");
    r.unit = e["unit"].get<std::string>();
    return r;
  }
};

}  // namespace

std::string ReferenceEntry::describe() const {
  return fmt::format("cluster '{}' entry {} ({} {} @ {})", cluster, index, benchmark, params.dump(),
                     gpu_count ? std::to_string(*gpu_count) : "*");
}

Reference reference_from_json(const std::string& label, const nlohmann::json& doc) {
  Reader rd{label};
  if (!doc.is_object()) rd.fail("top level", "not an object");
  if (!doc.contains("schema") || doc["schema"] != kReferenceSchema)
    rd.fail("schema", fmt::format("not a gpuscale reference (\"schema\" must be \"{}\")", kReferenceSchema));
  if (!doc.contains("schema_version") || doc["schema_version"] != 1)
    rd.fail("schema_version", fmt::format("unsupported version {} (this gpuscale reads 1)", doc.value("schema_version", nlohmann::json()).dump()));
  if (!doc.contains("clusters") || !doc["clusters"].is_array() || doc["clusters"].empty())
    rd.fail("clusters", "must be a non-empty array of {\"cluster\": ..., \"entries\": [...]}");
  Reference ref;
  ref.path = label;
  for (std::size_t i = 0; i < doc["clusters"].size(); ++i) {
    const auto& c = doc["clusters"][i];
    const auto where = fmt::format("clusters[{}]", i);
    if (!c.is_object() || !c.contains("cluster") || !c["cluster"].is_string() || c["cluster"].get<std::string>().empty())
      rd.fail(where + ".cluster", "must be a non-empty string (wildcards allowed)");
    if (!c.contains("entries") || !c["entries"].is_array()) rd.fail(where + ".entries", "must be an array");
    std::vector<ReferenceEntry> entries;
    for (std::size_t j = 0; j < c["entries"].size(); ++j) {
      auto e = rd.entry(c["entries"][j], fmt::format("{}.entries[{}]", where, j));
      e.cluster = c["cluster"].get<std::string>();
      e.index = j;
      entries.push_back(std::move(e));
    }
    ref.clusters.emplace_back(c["cluster"].get<std::string>(), std::move(entries));
  }
  return ref;
}

Reference load_reference(const std::string& path) {
  return reference_from_json(path, read_json_file(path, kMaxReferenceBytes));
}

bool entry_matches(const ReferenceEntry& e, const ResultRow& row) {
  if (!glob(e.benchmark, row.benchmark)) return false;
  if (e.gpu_count && *e.gpu_count != row.gpu_count) return false;
  for (const auto& [k, want] : e.params.items()) {
    if (!row.params.contains(k)) return false;
    const auto& have = row.params[k];
    if (want.is_string()) {
      if (!glob(want.get<std::string>(), text_of(have))) return false;
    } else if (want.is_number()) {
      if (!have.is_number() || have.get<double>() != want.get<double>()) return false;
    } else if (want != have) {
      return false;
    }
  }
  return true;
}

std::size_t CheckOutcome::failures() const {
  return unmatched.size() +
         static_cast<std::size_t>(std::count_if(checked.begin(), checked.end(), [](const auto& c) { return !c.pass; }));
}

CheckOutcome check_against(const LoadedResult& run, const Reference& ref) {
  CheckOutcome out;
  out.file = run.path;
  out.cluster = run.cluster;
  std::vector<const ReferenceEntry*> entries;
  std::vector<std::string> known;
  for (const auto& [pattern, list] : ref.clusters) {
    known.push_back(pattern);
    if (!glob(pattern, run.cluster)) continue;
    out.clusters_used.push_back(pattern);
    for (const auto& e : list) entries.push_back(&e);
  }
  if (out.clusters_used.empty()) {
    std::string names;
    for (const auto& k : known) names += (names.empty() ? "" : ", ") + terminal_quote(k);
    throw Error(fmt::format("{}: no reference for cluster '{}' (it has: {})", term_text(ref.path),
                            terminal_quote(run.cluster), terminal_quote(names, kMaxShownBytes)));
  }
  std::vector<bool> used(entries.size(), false);
  for (const auto& row : run.rows) {
    auto it = std::find_if(entries.begin(), entries.end(), [&](const ReferenceEntry* e) { return entry_matches(*e, row); });
    if (it == entries.end()) {
      ++out.uncovered;
      continue;
    }
    used[static_cast<std::size_t>(it - entries.begin())] = true;
    const ReferenceEntry& e = **it;
    CheckedRow c{&row, &e, false, ""};
    const double lo = e.lower ? e.value * (1 - *e.lower) : 0;
    const std::string lo_text = e.lower ? figure_text(lo) : "-";
    const std::string hi_text = e.upper ? figure_text(e.value * (1 + *e.upper)) : "-";
    if (row.status != RowStatus::ok) {
      c.message = fmt::format("{}: {}", row_status_name(row.status), row.errors.empty() ? "no value" : row.errors.front());
    } else if (row.unit != e.unit) {
      c.message = fmt::format("unit {} but the reference is in {}", row.unit, e.unit);
    } else if (!row.aggregate) {
      c.message = "no value";
    } else {
      const double v = *row.aggregate;
      c.pass = (!e.lower || v >= lo) && (!e.upper || v <= e.value * (1 + *e.upper));
      c.message = fmt::format("{} {} {} [{}, {}] (reference {})", figure_text(v), row.unit, c.pass ? "in" : "outside",
                              lo_text, hi_text, figure_text(e.value));
    }
    out.checked.push_back(std::move(c));
  }
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (!used[i]) out.unmatched.push_back(entries[i]);
  return out;
}

JUnitSuite check_suite(const CheckOutcome& c) {
  JUnitSuite s{fmt::format("check {} ({})", c.file, c.cluster), {}};
  for (const auto& r : c.checked) {
    JUnitCase jc = row_case("gpuscale.check", *r.row);
    jc.failed = !r.pass;
    if (!r.pass) {
      jc.message = r.message;
      jc.details = fmt::format("{}\nreference: {}", r.message, r.entry->describe());
    }
    s.cases.push_back(std::move(jc));
  }
  for (const ReferenceEntry* e : c.unmatched)
    s.cases.push_back({"gpuscale.check.reference", e->describe(), true, false, "reference entry matched no row of the run", ""});
  return s;
}

}  // namespace gpuscale
