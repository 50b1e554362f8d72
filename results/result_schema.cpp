#include "results/result_schema.h"

#include <algorithm>
#include <memory>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include "core/error.h"
#include "core/term_text.h"
#include "results/result_file.h"
#include "results/row_fields.h"

namespace gpuscale {

extern const char* const kResultSchemaV1;  // generated from results/schema/result-v1.schema.json
extern const char* const kResultSchemaV2;  // generated from results/schema/result-v2.schema.json
extern const char* const kResultSchemaDefs;  // generated from results/schema/result-defs.schema.json

namespace {

// The schema text of each version read, by version: a new version adds its line here.
const char* const* schema_texts() {
  static_assert(kResultSchemaVersion == 2 && kOldestResultSchemaVersion == 1, "a new schema version needs its schema here");
  static const char* const texts[] = {nullptr, kResultSchemaV1, kResultSchemaV2};
  return texts;
}

// A version read: `version` itself, else the newest (a document of another version fails its schema).
int known(int version) {
  return version >= kOldestResultSchemaVersion && version <= kResultSchemaVersion ? version : kResultSchemaVersion;
}

std::unique_ptr<valijson::Schema> parse_schema(const nlohmann::json& doc) {
  auto sch = std::make_unique<valijson::Schema>();
  valijson::SchemaParser parser;
  valijson::adapters::NlohmannJsonAdapter adapter(doc);
  parser.populateSchema(adapter, *sch);
  return sch;
}

// The shared definitions' file as a version's schema names it in its references.
constexpr std::string_view kDefsRef = "result-defs.schema.json#";

// Each reference into the shared definitions made local ("#/definitions/..."), in place.
void localize_refs(nlohmann::json& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "$ref" && it->is_string() && it->get<std::string>().rfind(kDefsRef, 0) == 0)
        *it = "#" + it->get<std::string>().substr(kDefsRef.size());
      else
        localize_refs(*it);
    }
  } else if (j.is_array()) {
    for (auto& e : j) localize_refs(e);
  }
}

// A version's schema with the shared definitions (results/schema/result-defs.schema.json) copied into
// its own: every reference then resolves inside the one document (no fetching of other files), and
// it validates exactly what the two files validate together.
nlohmann::json with_shared_definitions(const char* text) {
  auto doc = nlohmann::json::parse(text);
  static const auto defs = nlohmann::json::parse(kResultSchemaDefs);
  for (const auto& [name, def] : defs.at("definitions").items())
    if (!doc["definitions"].emplace(name, def).second)
      throw Error("internal error: the result schema defines " + name + " and so do the shared definitions");
  localize_refs(doc);
  return doc;
}

struct Schemas {
  std::unique_ptr<valijson::Schema> document, row;
};

// The schema file with the types of the metric fields of the row-field table (results/row_fields.h)
// filled in: the file names only the metrics whose shape it spells out itself (telemetry, ...); an entry
// it has is kept.
nlohmann::json with_metric_fields(nlohmann::json doc) {
  auto& defs = doc.at("definitions");
  auto& row = defs.at("row").at("properties").at("metrics")["properties"];
  auto& rank = defs.at("rank_columns").at("properties").at("metrics")["properties"];
  for (const auto& f : row_fields()) {
    if (f.place == FieldPlace::row) continue;
    auto& props = f.place == FieldPlace::row_metric ? row : rank;
    const std::string key(f.name);
    if (const auto s = metric_schema(f); !s.is_null() && !props.contains(key)) props[key] = s;
  }
  return doc;
}

// The whole document's schema, and its row definition as a schema of its own (the definitions kept,
// so that its references resolve).
// The current version's rows are the row-field table's: its metric types are filled in.
Schemas make_schemas(const char* text, bool current) {
  const auto doc = current ? with_metric_fields(with_shared_definitions(text)) : with_shared_definitions(text);
  const nlohmann::json row = {{"$ref", "#/definitions/row"}, {"definitions", doc.at("definitions")}};
  return {parse_schema(doc), parse_schema(row)};
}

const Schemas& schemas(int version) {
  static const auto all = [] {
    std::vector<Schemas> out(kResultSchemaVersion + 1);
    for (int v = kOldestResultSchemaVersion; v <= kResultSchemaVersion; ++v)
      out[v] = make_schemas(schema_texts()[v], v == kResultSchemaVersion);
    return out;
  }();
  return all[known(version)];
}

// The deepest errors are the most specific; up to three, each "<pointer>: <reason>".
std::string validate(const valijson::Schema& schema, const nlohmann::json& doc, const std::string& root) {
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter adapter(doc);
  if (validator.validate(schema, adapter, &results)) return "";
  std::vector<valijson::ValidationResults::Error> errors;
  valijson::ValidationResults::Error err;
  while (results.popError(err)) errors.push_back(err);
  std::stable_sort(errors.begin(), errors.end(),
                   [](const auto& a, const auto& b) { return a.context.size() > b.context.size(); });
  std::string out;
  int shown = 0;
  for (const auto& e : errors) {
    std::string where;
    for (std::size_t i = 0; i < e.context.size(); ++i) where += i == 0 && !root.empty() ? root : e.context[i];
    out += fmt::format("{}{}: {}", shown ? "; " : "", where, e.description);
    if (++shown == 3) break;
  }
  return terminal_safe(out);  // the pointers quote the file's keys
}

}  // namespace

int result_schema_version(const nlohmann::json& doc, const std::string& name) {
  if (!doc.is_object()) throw Error(fmt::format("{}: not a gpuscale result (top level is not an object)", name));
  if (!doc.contains("schema") || !doc["schema"].is_string() || doc["schema"].get<std::string>() != kResultSchemaName)
    throw Error(fmt::format("{}: not a gpuscale result (\"schema\" is not \"{}\")", name, kResultSchemaName));
  const auto& v = doc.value("schema_version", nlohmann::json());
  if (v.is_number_integer() && v.get<double>() > kResultSchemaVersion)
    throw Error(fmt::format("{}: schema_version {} is newer than this gpuscale (reads {} and {})", name,
                            v.dump().substr(0, 40), kOldestResultSchemaVersion, kResultSchemaVersion));
  if (!v.is_number_integer() || v.get<double>() < kOldestResultSchemaVersion)
    throw Error(fmt::format("{}: unsupported schema_version {} (this gpuscale reads versions {} and {})", name,
                            v.dump().substr(0, 40), kOldestResultSchemaVersion, kResultSchemaVersion));
  return v.get<int>();
}

std::string validate_result_json(const nlohmann::json& doc) {
  const auto& v = doc.is_object() ? doc.value("schema_version", nlohmann::json()) : nlohmann::json();
  const bool read = v.is_number_integer() && v.get<double>() >= kOldestResultSchemaVersion && v.get<double>() <= kResultSchemaVersion;
  return validate(*schemas(read ? v.get<int>() : kResultSchemaVersion).document, doc, "");
}

std::string validate_result_row(const nlohmann::json& row, int version, std::size_t index) {
  return validate(*schemas(version).row, row, fmt::format("<root>[results][{}]", index));
}

const std::string& result_schema_text(int version) {
  static const auto all = [] {
    std::vector<std::string> out(kResultSchemaVersion + 1);
    for (int v = kOldestResultSchemaVersion; v <= kResultSchemaVersion; ++v) out[v] = schema_texts()[v];
    return out;
  }();
  return all[known(version)];
}

nlohmann::json result_schema_bundled(int version) {
  const int v = known(version);
  auto doc = v == kResultSchemaVersion ? with_metric_fields(with_shared_definitions(schema_texts()[v]))
                                       : with_shared_definitions(schema_texts()[v]);
  // Its own name: the address of the two-file schema stays theirs.
  doc["$id"] = fmt::format("https://gpuscale.dev/schema/result-v{}.bundled.schema.json", v);
  return doc;
}

}  // namespace gpuscale
