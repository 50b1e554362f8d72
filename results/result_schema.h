#pragma once
// The result schemas of every version gpuscale reads (results/schema/result-v<N>.schema.json,
// embedded), and the checks against them: a whole document, a header without its rows, one row.
#include <string>

#include <nlohmann/json.hpp>

#include "results/result_file.h"

namespace gpuscale {

// The schema_version of a document that claims to be a gpuscale result; throws
// gpuscale::Error("<name>: <problem>") unless it is one of a version this gpuscale reads
// (kOldestResultSchemaVersion .. kResultSchemaVersion). A newer version is named as such.
int result_schema_version(const nlohmann::json& doc, const std::string& name);

// Validates a document (its rows included, if any) against the schema of its schema_version (the
// newest one when that is not a version read); returns "" when valid, else the first problems found
// (JSON pointer and reason).
std::string validate_result_json(const nlohmann::json& doc);

// Validates one element of "results" against the row definition of `version`'s schema; "" when
// valid, else the problems, their pointers under /results/<index>.
std::string validate_result_row(const nlohmann::json& row, int version, std::size_t index);

// The schema document of `version` as shipped.
const std::string& result_schema_text(int version = kResultSchemaVersion);

// The schema gpuscale checks `version`'s documents with, as one document that needs no other: the shared
// definitions (result-defs.schema.json) copied in and every reference made local, and for the current
// version the metric types of the row-field table filled in. `gpuscale list --schema` prints it;
// results/schema/result-v2.bundled.schema.json is that output, for validators outside gpuscale.
nlohmann::json result_schema_bundled(int version = kResultSchemaVersion);

}  // namespace gpuscale
