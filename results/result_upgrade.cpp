#include "results/result_upgrade.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "results/result_schema.h"

namespace gpuscale {
namespace {

constexpr int kVersion1 = 1;
static_assert(kResultSchemaVersion == 2, "a new schema version upgrades version 2 here, and version 1 through it");

bool is_v1_row(const nlohmann::json& row) { return row.is_object() && row.contains("ranks") && row.at("ranks").is_array(); }

}  // namespace

ResultRow result_row_from_v1(const nlohmann::json& j) {
  ResultRow r;
  detail::read_common_row_fields(j, r);
  j.at("ranks").get_to(r.ranks);
  if (j.contains("groups")) j.at("groups").get_to(r.groups);
  r.spread = spread_of_ranks(r.ranks);
  r.rank_stats = true;  // a version-1 row always carried them; merge keeps what its inputs had
  return r;
}

std::string ResultRowUpgrader::read(const nlohmann::json& element, std::size_t index, ResultRow& out) {
  const bool v1 = is_v1_row(element);
  auto& first = v1 ? first_v1_ : first_v2_;
  first = std::min(first, index);
  if (auto p = validate_result_row(element, v1 ? kVersion1 : kResultSchemaVersion, index); !p.empty())
    return "does not match the result schema: " + p;
  try {
    out = v1 ? result_row_from_v1(element) : result_row_from_v2(element);
  } catch (const nlohmann::json::exception& e) {
    return fmt::format("/results/{}: {}", index, terminal_safe(e.what()));
  } catch (const Error& e) {
    return fmt::format("/results/{}/{}", index, terminal_safe(e.what()));
  }
  return "";
}

std::string ResultRowUpgrader::check_file_version(int file_version) const {
  const bool v1_file = file_version == kVersion1;
  const std::size_t stray = v1_file ? first_v2_ : first_v1_;
  if (stray == SIZE_MAX) return "";
  return fmt::format("does not match the result schema: /results/{}: a version-{} row in a schema_version {} file", stray,
                     v1_file ? kResultSchemaVersion : kVersion1, file_version);
}

nlohmann::json upgrade_result_header(nlohmann::json header) {
  if (header.is_object()) header["schema_version"] = kResultSchemaVersion;
  return header;
}

nlohmann::json upgrade_result_document(nlohmann::json doc, const std::string& name) {
  if (!doc.is_object() || doc.value("schema_version", nlohmann::json()) != kVersion1) return doc;
  auto& rows = doc["results"];
  ResultRowUpgrader upgrader;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ResultRow row;
    if (auto p = upgrader.read(rows[i], i, row); !p.empty()) throw Error(fmt::format("{}: {}", name, p));
    rows[i] = row;
  }
  if (auto p = upgrader.check_file_version(kVersion1); !p.empty()) throw Error(fmt::format("{}: {}", name, p));
  return upgrade_result_header(std::move(doc));
}

}  // namespace gpuscale
