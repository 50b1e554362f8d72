#pragma once
// DCGM diagnostic documents for the unit tests, built in the layouts NVIDIA/DCGM's dcgmi writes
// (dcgmi/Diag.cpp; keys nvvs/include/NvvsJsonStrings.h; 4.x at tag v4.6.0, 3.x at v3.3.9), independent
// of gpuscale's parser: the tests compare what the parser reads with what was put here.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuscale::health::test {

struct PlantedResult {
  std::string category, test;
  int gpu = 0;
  std::string status;  // Pass, Fail, Skip, Warn
  std::vector<nlohmann::json> warnings;  // {"warning", "error_id", "error_category", "error_severity"}
  std::vector<std::string> info;
};

inline nlohmann::json dcgm_warning(const std::string& text, int id, int category, int severity) {
  return {{"warning", text}, {"error_id", id}, {"error_category", category}, {"error_severity", severity}};
}

// DCGM 4.x: "DCGM Diagnostic", entity results, entity_groups with serial_num where given.
inline nlohmann::json dcgm4_doc(const std::vector<PlantedResult>& results, const std::vector<int>& gpus,
                                const std::map<int, std::string>& serials) {
  nlohmann::json cats = nlohmann::json::array();
  std::map<std::string, std::map<std::string, nlohmann::json>> by;  // category -> test -> results
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& r : results) {
    if (!by[r.category].count(r.test)) order.emplace_back(r.category, r.test);
    nlohmann::json e = {{"entity_group", "GPU"}, {"entity_group_id", 1}, {"entity_id", r.gpu}, {"status", r.status}};
    if (!r.warnings.empty()) e["warnings"] = r.warnings;
    if (!r.info.empty()) e["info"] = r.info;
    by[r.category][r.test].push_back(e);
  }
  std::map<std::string, nlohmann::json> cat_json;
  for (const auto& [c, t] : order) {
    if (!cat_json.count(c)) cat_json[c] = {{"category", c}, {"tests", nlohmann::json::array()}};
    cat_json[c]["tests"].push_back({{"name", t}, {"results", by[c][t]}, {"test_summary", {{"status", "Pass"}}}});
  }
  for (auto& [c, j] : cat_json) cats.push_back(j);
  nlohmann::json ents = nlohmann::json::array();
  for (int g : gpus) {
    nlohmann::json e = {{"entity_id", g}, {"device_id", "2330"}};
    if (serials.count(g)) e["serial_num"] = serials.at(g);
    ents.push_back(e);
  }
  return {{"DCGM Diagnostic", {{"test_categories", cats}}},
          {"entity_groups", {{{"entity_group", "GPU"}, {"entity_group_id", 1}, {"entities", ents}}}},
          {"metadata", {{"version", "4.6.0"}, {"Driver Version Detected", "570.124.06"}}}};
}

}  // namespace gpuscale::health::test
