// The row-field table against the schema file and the validator (results/row_fields.h): the file's
// required row fields are the table's, and the validator applies the table's types of metric fields
// that the file does not spell out.
#include <algorithm>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "result_doc.h"
#include "results/result_schema.h"
#include "results/row_fields.h"

namespace gpuscale {
namespace {

using nlohmann::json;

TEST(RowFields, SchemaRequiresWhatTheTableRequires) {
  const auto schema = json::parse(result_schema_text());
  const auto& row = schema.at("definitions").at("row");
  std::set<std::string> in_schema = row.at("required").get<std::set<std::string>>(), in_table;
  for (const auto& f : row_fields())
    if (f.required) in_table.emplace(f.name);
  EXPECT_EQ(in_schema, in_table);
  for (const auto& f : row_fields())
    if (f.place == FieldPlace::row) {
      EXPECT_TRUE(row.at("properties").contains(std::string(f.name))) << f.name;
    }
}

TEST(RowFields, ValidatorAppliesTheTableTypes) {
  std::mt19937 rng(20261203);
  for (const auto& f : row_fields()) {
    if (f.place == FieldPlace::row || f.type != FieldType::number) continue;
    json row = testing_doc::sample_row();
    const double v = std::uniform_real_distribution<double>(1, 100)(rng);
    auto& metrics = f.place == FieldPlace::row_metric ? row["metrics"] : row["ranks"]["metrics"];
    metrics[std::string(f.name)] = v;
    EXPECT_EQ(validate_result_row(row, kResultSchemaVersion, 0), "") << f.name;
    metrics[std::string(f.name)] = "fast";  // text where the table says number
    EXPECT_NE(validate_result_row(row, kResultSchemaVersion, 0), "") << f.name << " as text was accepted";
  }
}

TEST(RowFields, NamedEntriesAreTheTableEntries) {
  for (const RowField* f : {&fields::aggregate, &fields::time_us, &fields::busbw, &fields::step_time_us})
    EXPECT_EQ(find_row_field(f->name, f->place), f);
  EXPECT_EQ(find_row_field("no_such_field", FieldPlace::row), nullptr);
}

}  // namespace
}  // namespace gpuscale
