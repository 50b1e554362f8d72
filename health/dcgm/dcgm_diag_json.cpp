#include "health/dcgm/dcgm_diag_json.h"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/term_text.h"

namespace gpuscale::health {
namespace {

using nlohmann::json;

constexpr int kDcgmEntityGroupGpu = 1;  // DCGM_FE_GPU (dcgmlib/dcgm_fields.h)

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw Error(fmt::format("dcgmi's JSON at {}: {}", where, what), 5);
}

const json& member(const json& obj, const char* key, const std::string& where, json::value_t type) {
  if (!obj.contains(key)) bad(where, fmt::format("no \"{}\"", key));
  const auto& v = obj[key];
  if (v.type() != type && !(type == json::value_t::number_integer && v.is_number_unsigned()))
    bad(where + "/" + key, fmt::format("expected {}, found {}", json(type).type_name(), v.type_name()));
  return v;
}

std::string text_of(const json& obj, const char* key, const std::string& where) {
  return member(obj, key, where, json::value_t::string).get<std::string>();
}

std::optional<long long> integer_or_none(const json& obj, const char* key, const std::string& where) {
  if (!obj.contains(key)) return std::nullopt;
  if (!obj[key].is_number_integer()) bad(where + "/" + key, fmt::format("expected an integer, found {}", obj[key].type_name()));
  return obj[key].get<long long>();
}

int gpu_id_text(const std::string& s, const std::string& where) {  // 3.x writes "0"
  int id = -1;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), id);
  if (ec != std::errc() || p != s.data() + s.size() || id < 0) bad(where, "not a GPU id: '" + terminal_quote(s) + "'");
  return id;
}

int entity_id(const json& v, const std::string& where) {
  if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 1 << 20)
    bad(where, "expected a GPU id (a small non-negative integer)");
  return v.get<int>();
}

std::vector<DcgmWarning> warnings_of(const json& r, const std::string& where) {
  std::vector<DcgmWarning> out;
  if (!r.contains("warnings")) return out;
  const auto& ws = member(r, "warnings", where, json::value_t::array);
  for (std::size_t i = 0; i < ws.size(); ++i) {
    const auto w_where = fmt::format("{}/warnings/{}", where, i);
    if (!ws[i].is_object()) bad(w_where, "expected an object");
    // DCGM 3.x's level-one (software) results name the text "warnings" (v3.3.9 dcgmi/Diag.cpp
    // HelperJsonAddLevelOneResults writes NVVS_WARNINGS where the per-GPU results write NVVS_WARNING).
    const char* text_key = !ws[i].contains("warning") && ws[i].contains("warnings") ? "warnings" : "warning";
    out.push_back({text_of(ws[i], text_key, w_where), integer_or_none(ws[i], "error_id", w_where),
                   integer_or_none(ws[i], "error_category", w_where), integer_or_none(ws[i], "error_severity", w_where)});
  }
  return out;
}

std::vector<std::string> info_of(const json& r, const std::string& where) {
  if (!r.contains("info")) return {};
  const auto& v = r["info"];
  if (v.is_string()) return {v.get<std::string>()};  // 3.x: one string
  if (!v.is_array()) bad(where + "/info", "expected text or a list of text");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) bad(fmt::format("{}/info/{}", where, i), "expected text");
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

std::string status_of(const json& r, const std::string& where) {
  auto s = text_of(r, "status", where);
  static const std::set<std::string> known = {"Pass", "Fail", "Warn", "Skip"};
  if (!known.count(s)) bad(where + "/status", "unknown status '" + terminal_quote(s) + "' (Pass, Fail, Warn or Skip)");
  return s;
}

int status_rank(const std::string& s) { return s == "Fail" ? 3 : s == "Warn" ? 2 : s == "Skip" ? 1 : 0; }

// One test's per-entity results into `d`, those that name no entity into the test's own outcome `s`;
// true when one names a GPU.
bool read_results(const json& test, const std::string& category, const std::string& name, const std::string& where,
                  DcgmDiag& d, DcgmTestSummary& s) {
  if (!test.contains("results")) return false;
  const auto& results = member(test, "results", where, json::value_t::array);
  bool any_gpu = false;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto r_where = fmt::format("{}/results/{}", where, i);
    const auto& r = results[i];
    if (!r.is_object()) bad(r_where, "expected an object");
    DcgmResult res;
    res.category = category;
    res.test = name;
    // 3.x: "0" per GPU; a level-one result the integer GPU id of its error (dcgmDiagErrorDetail_v2's int
    // gpuId, -1 when the error names no GPU).
    const bool no_gpu = r.contains("gpu_id") && r["gpu_id"].is_number_integer() && r["gpu_id"].get<long long>() < 0;
    if (r.contains("gpu_id") && !no_gpu) {
      res.gpu_id = r["gpu_id"].is_string() ? gpu_id_text(r["gpu_id"].get<std::string>(), r_where + "/gpu_id")
                                           : entity_id(r["gpu_id"], r_where + "/gpu_id");
    } else if (r.contains("entity_id")) {  // 4.x
      const auto group = integer_or_none(r, "entity_group_id", r_where);
      if (!group) bad(r_where, "an entity_id without its entity_group_id");
      if (*group != kDcgmEntityGroupGpu) {
        ++d.other_entity_results;
        continue;
      }
      res.gpu_id = entity_id(r["entity_id"], r_where + "/entity_id");
    } else {  // no entity: the test's outcome on the node (3.x's level-one results without an error)
      const auto status = status_of(r, r_where);
      if (s.status.empty() || status_rank(status) > status_rank(s.status)) s.status = status;
      for (auto& w : warnings_of(r, r_where)) s.warnings.push_back(std::move(w));
      continue;
    }
    res.status = status_of(r, r_where);
    res.warnings = warnings_of(r, r_where);
    res.info = info_of(r, r_where);
    d.results.push_back(std::move(res));
    any_gpu = true;
  }
  return any_gpu;
}

void read_categories(const json& diag, const std::string& top, DcgmDiag& d) {
  const auto where = "/" + top;
  const auto& cats = member(diag, "test_categories", where, json::value_t::array);
  for (std::size_t c = 0; c < cats.size(); ++c) {
    const auto c_where = fmt::format("{}/test_categories/{}", where, c);
    if (!cats[c].is_object()) bad(c_where, "expected an object");
    const auto category = text_of(cats[c], "category", c_where);
    const auto& tests = member(cats[c], "tests", c_where, json::value_t::array);
    for (std::size_t t = 0; t < tests.size(); ++t) {
      const auto t_where = fmt::format("{}/tests/{}", c_where, t);
      const auto& test = tests[t];
      if (!test.is_object()) bad(t_where, "expected an object");
      DcgmTestSummary s;
      s.category = category;
      s.test = text_of(test, "name", t_where);
      s.has_gpu_results = read_results(test, category, s.test, t_where, d, s);
      if (test.contains("test_summary")) {
        const auto& sum = member(test, "test_summary", t_where, json::value_t::object);
        s.status = status_of(sum, t_where + "/test_summary");
        s.warnings = warnings_of(sum, t_where + "/test_summary");
      }
      d.tests.push_back(std::move(s));
    }
  }
}

void read_gpus(const json& doc, DcgmDiag& d) {
  std::set<int> ids;
  if (doc.contains("entity_groups")) {  // 4.x
    const auto& groups = member(doc, "entity_groups", "", json::value_t::array);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const auto g_where = fmt::format("/entity_groups/{}", g);
      if (!groups[g].is_object()) bad(g_where, "expected an object");
      if (integer_or_none(groups[g], "entity_group_id", g_where) != kDcgmEntityGroupGpu) continue;
      const auto& ents = member(groups[g], "entities", g_where, json::value_t::array);
      for (std::size_t e = 0; e < ents.size(); ++e) {
        const auto e_where = fmt::format("{}/entities/{}", g_where, e);
        if (!ents[e].is_object() || !ents[e].contains("entity_id")) bad(e_where, "expected an object with an entity_id");
        const int id = entity_id(ents[e]["entity_id"], e_where + "/entity_id");
        ids.insert(id);
        if (ents[e].contains("serial_num")) d.serials[id] = text_of(ents[e], "serial_num", e_where);
      }
    }
  }
  if (doc.contains("GPU Device Serials")) {  // 3.x
    const auto& serials = member(doc, "GPU Device Serials", "", json::value_t::object);
    for (const auto& [k, v] : serials.items()) {
      const int id = gpu_id_text(k, "/GPU Device Serials");
      if (!v.is_string()) bad("/GPU Device Serials/" + k, "expected text");
      ids.insert(id);
      d.serials[id] = v.get<std::string>();
    }
  }
  for (const auto& r : d.results) ids.insert(r.gpu_id);
  d.gpu_ids.assign(ids.begin(), ids.end());
}

}  // namespace

DcgmDiag parse_dcgm_diag(std::string_view text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(fmt::format("dcgmi printed no JSON: {}", e.what()), 5);
  }
  if (!doc.is_object()) bad("/", "expected an object");
  DcgmDiag d;
  std::string top;
  if (doc.contains("DCGM Diagnostic")) {
    top = "DCGM Diagnostic";
    d.format = "DCGM 4.x";
  } else if (doc.contains("DCGM GPU Diagnostic")) {
    top = "DCGM GPU Diagnostic";
    d.format = "DCGM 3.x";
  } else {
    bad("/", "neither \"DCGM Diagnostic\" (DCGM 4.x) nor \"DCGM GPU Diagnostic\" (DCGM 3.x)");
  }
  const auto& diag = member(doc, top.c_str(), "", json::value_t::object);
  if (diag.contains("runtime_error")) d.runtime_error = text_of(diag, "runtime_error", "/" + top);
  if (diag.contains("version") && diag["version"].is_string()) d.version = diag["version"].get<std::string>();
  if (doc.contains("metadata") && doc["metadata"].is_object()) {
    const auto& m = doc["metadata"];
    if (m.contains("version") && m["version"].is_string()) d.version = m["version"].get<std::string>();
    if (m.contains("Driver Version Detected") && m["Driver Version Detected"].is_string())
      d.driver = m["Driver Version Detected"].get<std::string>();
  }
  if (!d.runtime_error) read_categories(diag, top, d);
  read_gpus(doc, d);
  return d;
}

}  // namespace gpuscale::health
