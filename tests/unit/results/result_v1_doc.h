#pragma once
// Version-1 result documents, for the upgrader's own tests (results/result_upgrade.h) and nothing
// else: gpuscale writes only version 2, and every other test builds version 2 (support/result_doc.h).
#include <vector>

#include <nlohmann/json.hpp>

#include "result_doc.h"
#include "results/result_file.h"

namespace gpuscale::testing_v1 {

// A row as version 1 wrote it: an array of rank objects, each with its statistics; groups as objects;
// no spread (it follows from the ranks).
inline nlohmann::json row_json(const ResultRow& r) {
  nlohmann::json j = r;
  j["ranks"] = r.ranks;
  if (!r.groups.empty()) j["groups"] = r.groups;
  j.erase("spread");
  return j;
}

// `doc` (a version-2 document) with schema_version 1 and `rows` written as version 1 wrote them.
inline nlohmann::json document(nlohmann::json doc, const std::vector<ResultRow>& rows) {
  doc["schema_version"] = 1;
  doc["results"] = nlohmann::json::array();
  for (const auto& r : rows) doc["results"].push_back(row_json(r));
  doc.erase("run_id");
  return doc;
}

inline nlohmann::json minimal_doc() { return document(testing_doc::minimal_result_doc(), {testing_doc::sample_row()}); }

}  // namespace gpuscale::testing_v1
