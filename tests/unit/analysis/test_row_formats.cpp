// Every output against one row case (the google/benchmark output-test idea): a row carrying a random
// value in every field of the row-field table (results/row_fields.h) is written, read back, and
// rendered as CSV, OpenMetrics, the text and Markdown tables and the history's record. Each field must
// appear in each format its table entry names, with its value; a field added to the table is checked
// here with no change to this test.
#include <cmath>
#include <cstdint>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "analysis/reporter.h"
#include "analysis/row_text.h"
#include "history/run_record.h"
#include "result_doc.h"
#include "results/row_fields.h"

namespace gpuscale {
namespace {

using nlohmann::json;

// The row of the case: sample_row() with random figures and every metric field of the table set.
ResultRow random_row(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.05, 0.95), big(1.0, 1000.0);
  ResultRow r = testing_doc::sample_row();
  r.aggregate = big(rng);
  r.scaling_efficiency = u(rng);
  r.expected_peak = *r.aggregate * 4;
  r.fraction_of_peak = u(rng);
  for (const auto& f : row_fields()) {
    if (f.place == FieldPlace::row) continue;
    const json v = f.type == FieldType::text      ? json("note " + std::to_string(rng() % 1000))
                   : f.type == FieldType::integer ? json(static_cast<std::int64_t>(big(rng)))
                                                  : json(std::floor(big(rng)));
    if (f.place == FieldPlace::row_metric) r.metrics[std::string(f.name)] = v;
    else
      for (auto& rank : r.ranks) rank.metrics[std::string(f.name)] = v;
  }
  return r;
}

LoadedResult loaded_with(const ResultRow& row) {
  json doc = testing_doc::minimal_result_doc();
  doc["results"] = json::array({json(row)});
  return result_from_json("case.json", doc);
}

// "1.234e+03" and "1234" are the same figure to the 6 digits the outputs keep.
bool same_figure(const std::string& text, double want) {
  try {
    const double got = std::stod(text);
    return std::abs(got - want) <= 1e-5 * std::max(1.0, std::abs(want));
  } catch (const std::exception&) {
    return false;
  }
}

// One CSV line's cells, RFC 4180 quoting undone (the params column is quoted JSON).
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += line[++i];
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

class RowFormats : public ::testing::TestWithParam<unsigned> {
 protected:
  void SetUp() override {
    std::mt19937 rng(GetParam());
    row = random_row(rng);
    std::vector<FileReport> files;
    files.push_back(make_file_report(loaded_with(row), kDefaultStragglerThreshold));
    report = std::move(files);
  }
  ResultRow row;
  std::vector<FileReport> report;
};

TEST_P(RowFormats, JsonRoundTripKeepsEveryField) {
  const ResultRow& back = report[0].run.rows.at(0);
  for (const auto& f : row_fields()) {
    if (f.type == FieldType::structure) continue;
    if (f.place == FieldPlace::rank_metric) {
      EXPECT_EQ(back.ranks.at(0).metrics.value(std::string(f.name), json()), row.ranks.at(0).metrics[std::string(f.name)])
          << f.name;
      continue;
    }
    const json want = field_json(row, f), got = field_json(back, f);
    if (want.is_number_float()) {
      EXPECT_NEAR(got.get<double>(), want.get<double>(), 1e-9) << f.name;
    } else {
      EXPECT_EQ(got, want) << f.name;
    }
  }
}

TEST_P(RowFormats, CsvHasEveryCsvField) {
  const std::string csv = report_format("--csv").render(report, {});
  const auto header = csv_cells(csv.substr(0, csv.find("\r\n")));
  const auto line = csv.substr(csv.find("\r\n") + 2);
  const auto cells = csv_cells(line.substr(0, line.find("\r\n")));
  ASSERT_EQ(header.size(), cells.size());
  std::map<std::string, std::string> at;
  for (std::size_t i = 0; i < header.size(); ++i) at[header[i]] = cells[i];
  for (const auto& f : row_fields()) {
    if (f.csv.empty()) continue;
    ASSERT_TRUE(at.count(std::string(f.csv))) << "no CSV column " << f.csv;
    const auto v = number_field(row, f);
    if (v) {
      EXPECT_TRUE(same_figure(at[std::string(f.csv)], *v)) << f.csv << ": " << at[std::string(f.csv)] << " for " << *v;
    }
  }
}

TEST_P(RowFormats, OpenMetricsHasEveryFamily) {
  const std::string prom = report_format("--openmetrics").render(report, {});
  for (const auto& f : row_fields()) {
    if (f.openmetrics.empty()) continue;
    const std::string name(f.openmetrics);
    EXPECT_NE(prom.find("# TYPE " + name + " gauge\n"), std::string::npos) << name;
    EXPECT_NE(prom.find("# HELP " + name + " " + std::string(f.meaning) + "\n"), std::string::npos) << name;
    const auto at = prom.find("\n" + name + "{");
    ASSERT_NE(at, std::string::npos) << name;
    const auto line = prom.substr(at + 1, prom.find('\n', at + 1) - at - 1);
    EXPECT_TRUE(same_figure(line.substr(line.rfind(' ') + 1), *number_field(row, f))) << line;
  }
}

TEST_P(RowFormats, TablesHaveEveryColumn) {
  const auto groups = group_rows(report[0].run.rows);
  ASSERT_EQ(groups.size(), 1u);
  const auto device = device_word("cpu");
  const auto h = headline_table(groups[0], device);
  const std::string md = report_format("--markdown").render(report, {});
  for (const auto& f : row_fields()) {
    if (f.column.empty()) continue;
    const std::string heading = &f == &fields::gpu_count ? device.many : std::string(f.column);
    const auto it = std::find_if(h.table.columns.begin(), h.table.columns.end(), [&](const auto& c) { return c.header == heading; });
    ASSERT_NE(it, h.table.columns.end()) << heading;
    const std::string cell = h.table.rows.at(0).at(static_cast<std::size_t>(it - h.table.columns.begin()));
    if (f.shown == Shown::percent) {
      EXPECT_EQ(cell, percent_text(number_field(row, f))) << heading;
    }
    if (f.shown == Shown::count) {
      EXPECT_EQ(cell, field_json(row, f).dump()) << heading;
    }
    EXPECT_NE(md.find(heading), std::string::npos) << "Markdown lacks " << heading;
  }
}

TEST_P(RowFormats, HistoryStoresEveryHistoryField) {
  const auto record = history::make_run_record(report[0].run, "0123");
  ASSERT_EQ(record.rows.size(), 1u);
  for (const auto& f : row_fields()) {
    if (f.history.empty()) continue;
    const auto v = number_field(row, f);
    ASSERT_TRUE(v) << f.name;
    if (&f == &fields::aggregate) {
      EXPECT_NEAR(*record.rows[0].value, *v, 1e-9);
      continue;
    }
    ASSERT_TRUE(record.rows[0].fields.count(std::string(f.history))) << f.history;
    EXPECT_NEAR(record.rows[0].fields.at(std::string(f.history)), *v, 1e-9 * std::max(1.0, *v)) << f.history;
  }
}

// What the history stores of a row comes back where the row keeps it (gpuscale plan --history reads
// rows so): every scalar history field, the node count, and an object field member by member.
TEST_P(RowFormats, HistoryFiguresComeBackWhereTheRowKeepsThem) {
  std::mt19937 rng(GetParam() + 1);
  std::uniform_real_distribution<double> us(1.0, 1e5);
  ResultRow source = row;
  source.nodes = 1 + static_cast<int>(rng() % 64);
  json phases = json::object();
  for (const char* name : {"compute", "dp_comm", "tp_comm", "bubble", "wait"}) phases[name] = us(rng);
  source.metrics[std::string(fields::phase_us.name)] = phases;
  auto stored = history_figures(source);
  EXPECT_EQ(stored.count("phase_us"), 0u) << "an object is stored member by member";
  EXPECT_EQ(stored.at("nodes"), source.nodes);
  stored["newer_field"] = 1;  // a field a newer gpuscale stored: left out

  ResultRow back;
  for (const auto& [name, v] : stored) put_history_figure(back, name, v);
  EXPECT_EQ(back.nodes, source.nodes);
  EXPECT_FALSE(back.metrics.contains("newer_field"));
  const json got = field_json(back, fields::phase_us);
  ASSERT_TRUE(got.is_object());
  EXPECT_EQ(got.size(), phases.size());
  for (const auto& [name, v] : phases.items()) EXPECT_DOUBLE_EQ(got.value(name, -1.0), v.get<double>()) << name;
  for (const auto& f : row_fields()) {
    if (f.history.empty() || &f == &fields::aggregate || f.type == FieldType::object) continue;
    const auto want = number_field(source, f);
    if (!want) continue;
    const auto have = number_field(back, f);
    ASSERT_TRUE(have) << f.name;
    EXPECT_NEAR(*have, *want, 1e-9 * std::max(1.0, std::abs(*want))) << f.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RowFormats, ::testing::Values(1u, 7u, 2026u));

// The table itself: one entry per (name, place), every scalar row member both written and read, and
// the schema's required row fields are the table's.
TEST(RowFieldTable, EntriesAreConsistent) {
  std::map<std::pair<std::string, int>, int> seen;
  for (const auto& f : row_fields()) {
    const auto key = std::make_pair(std::string(f.name), static_cast<int>(f.place));
    EXPECT_EQ(++seen[key], 1) << f.name << " declared twice";
    EXPECT_FALSE(f.meaning.empty()) << f.name;
    const bool scalar_member = f.place == FieldPlace::row && f.type != FieldType::structure;
    EXPECT_EQ(scalar_member, f.get != nullptr && f.set != nullptr) << f.name;
    if (!f.openmetrics.empty()) {
      EXPECT_EQ(f.openmetrics.rfind("gpuscale_", 0), 0u) << f.openmetrics;
    }
    if (f.required) {
      EXPECT_EQ(f.place, FieldPlace::row) << f.name;
    }
  }
}

}  // namespace
}  // namespace gpuscale
