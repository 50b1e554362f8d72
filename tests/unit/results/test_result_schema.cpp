// The result schema in one document (result_schema_bundled, results/result_schema.h): it needs no other
// file (every reference local and resolving), holds the version's and the shared definitions, and the
// metric types of the row-field table. tests/e2e/schema_bundle.py checks the committed file against it.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "results/result_schema.h"
#include "results/row_fields.h"

namespace gpuscale {
namespace {

using nlohmann::json;

void collect_refs(const json& j, std::set<std::string>& refs) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "$ref" && it->is_string()) refs.insert(it->get<std::string>());
      else collect_refs(*it, refs);
    }
  } else if (j.is_array()) {
    for (const auto& e : j) collect_refs(e, refs);
  }
}

TEST(ResultSchemaBundled, EveryReferenceIsLocalAndResolves) {
  const auto bundle = result_schema_bundled();
  std::set<std::string> refs;
  collect_refs(bundle, refs);
  ASSERT_FALSE(refs.empty());
  const std::string local = "#/definitions/";
  for (const auto& r : refs) {
    ASSERT_EQ(r.rfind(local, 0), 0u) << r << " refers outside the document";
    EXPECT_TRUE(bundle.at("definitions").contains(r.substr(local.size()))) << r << " resolves to nothing";
  }
}

TEST(ResultSchemaBundled, HoldsTheVersionsAndTheSharedDefinitions) {
  const auto bundle = result_schema_bundled();
  const auto own = json::parse(result_schema_text());
  for (const auto& [name, def] : own.at("definitions").items()) EXPECT_TRUE(bundle.at("definitions").contains(name)) << name;
  // The header, from result-defs.schema.json, is what the version's allOf names.
  EXPECT_EQ(bundle.at("allOf"), json::parse(R"([{"$ref": "#/definitions/header"}])"));
  EXPECT_TRUE(bundle.at("definitions").contains("header"));
  EXPECT_EQ(bundle.at("$id"), "https://gpuscale.dev/schema/result-v2.bundled.schema.json");
  EXPECT_NE(bundle.at("$id"), own.at("$id"));
}

TEST(ResultSchemaBundled, TypesTheTablesRowMetrics) {
  const auto metrics = result_schema_bundled().at("definitions").at("row").at("properties").at("metrics").at("properties");
  int typed = 0;
  for (const auto& f : row_fields()) {
    if (f.place != FieldPlace::row_metric || metric_schema(f).is_null()) continue;
    EXPECT_TRUE(metrics.contains(std::string(f.name))) << f.name;
    ++typed;
  }
  EXPECT_GT(typed, 0);
}

TEST(ResultSchemaBundled, OlderVersionHasNoOutsideReference) {
  std::set<std::string> refs;
  collect_refs(result_schema_bundled(1), refs);
  for (const auto& r : refs) EXPECT_EQ(r.rfind("#/", 0), 0u) << r;
}

}  // namespace
}  // namespace gpuscale
