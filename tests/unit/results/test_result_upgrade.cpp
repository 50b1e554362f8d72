// results/result_upgrade: version 1 at the edge. A version-1 file reads through every reader entry
// point (the streamed reader, the whole-document reader, the analysis loader, and through it compare,
// merge and history) as the same rows a version-2 file gives; a row of the other version than its
// file's is refused. The only tests that build version-1 files (result_v1_doc.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "analysis/compare.h"
#include "analysis/merge.h"
#include "analysis/result_set.h"
#include "core/error.h"
#include "history/run_record.h"
#include "result_v1_doc.h"
#include "results/result_document.h"
#include "results/result_io.h"
#include "results/result_schema.h"
#include "results/result_stream.h"
#include "results/result_upgrade.h"

namespace gpuscale {
namespace {

using nlohmann::json;
using testing_doc::minimal_result_doc;
using testing_doc::sample_row;

// Rows of a few shapes: per-rank statistics, groups, an attempt.
std::vector<ResultRow> some_rows(std::mt19937_64& rng) {
  std::vector<ResultRow> rows;
  const int n = 1 + static_cast<int>(rng() % 20);
  for (int i = 0; i < n; ++i) {
    auto r = sample_row();
    r.rank_stats = true;  // what a version-1 row always carries
    r.gpu_count = 1 + static_cast<int>(rng() % 2);
    r.params["elements"] = i * 100000 + static_cast<int>(rng() % 100000);  // each point once
    r.aggregate = static_cast<double>(rng() % 100000) / 8;  // exact in 6 digits: the same when written as version 2
    if (i % 3 == 1) {
      RowGroup g;
      g.ranks = {0, 1};
      g.hosts = {"node0"};
      g.value = 203.5;
      r.gpu_count = 2;
      r.groups = {g};
    }
    if (i % 4 == 2) r.attempt = 2;
    r.topology = r.gpu_count == 1 ? "single" : "intra-node";
    rows.push_back(r);
  }
  return rows;
}

TEST(ResultUpgrade, VersionOneRowsAreRead) {
  auto r = sample_row();
  RowGroup g;
  g.ranks = {0, 1};
  g.hosts = {"node0"};
  g.value = 203.5;
  r.groups = {g};
  r.attempt = 2;
  r.rank_stats = true;  // what a version-1 row always carries
  const auto v1 = testing_v1::row_json(r);
  ASSERT_TRUE(v1["ranks"].is_array());
  EXPECT_EQ(validate_result_row(v1, 1, 0), "");
  const auto back = result_row_from_v1(v1);
  EXPECT_EQ(json(back), json(r));  // written again: the version-2 row of the same fields
  ASSERT_EQ(back.ranks.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(json(back.ranks[i]), json(r.ranks[i]));  // statistics too
  EXPECT_TRUE(back.rank_stats);
  ASSERT_EQ(back.groups.size(), 1u);
  EXPECT_EQ(back.groups[0].value, 203.5);
  ResultRowUpgrader upgrader;
  ResultRow read;
  EXPECT_EQ(upgrader.read(v1, 0, read), "");
  EXPECT_EQ(json(read), json(back));
  EXPECT_EQ(upgrader.check_file_version(1), "");
  EXPECT_NE(upgrader.check_file_version(2), "");
  // The version-2 reader refuses it (only the upgrader knows version 1).
  EXPECT_ANY_THROW((void)v1.get<ResultRow>());
}

TEST(ResultUpgrade, TheVersionOneSchemaStillHolds) {
  auto doc = testing_v1::minimal_doc();
  EXPECT_EQ(validate_result_json(doc), "");
  doc["results"][0]["ranks"][0].erase("stats");  // version 1: every rank has its statistics
  EXPECT_NE(validate_result_json(doc), "");
  // A version-1 row in a version-2 document, and the reverse, do not match the schema.
  auto now = minimal_result_doc();
  now["results"] = json::array({testing_v1::row_json(sample_row())});
  EXPECT_NE(validate_result_json(now), "");
  auto old = testing_v1::minimal_doc();
  old["results"] = json::array({json(sample_row())});
  EXPECT_NE(validate_result_json(old), "");
  const auto v1 = json::parse(result_schema_text(1));
  EXPECT_EQ(v1["properties"]["schema_version"]["const"], 1);
  EXPECT_TRUE(v1["definitions"].contains("rank_value"));
}

class ResultUpgradeFiles : public testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() / ("gpuscale-upgrade-" + std::to_string(rd()) + std::to_string(rd()));
    ASSERT_TRUE(std::filesystem::create_directory(dir_));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::filesystem::path dir_;
};

// The streamed reader and the whole-document reader: a version-1 file gives the rows and the header of
// the version-2 file of the same rows (the header with schema_version 2; the file's own version kept).
TEST_F(ResultUpgradeFiles, EveryReaderEntryPointReadsVersionOneAsVersionTwo) {
  std::mt19937_64 rng(29);
  for (int round = 0; round < 3; ++round) {
    const auto rows = some_rows(rng);
    auto base = minimal_result_doc();
    base["results"] = rows;
    base = testing_doc::agreeing(base);
    const auto old_doc = testing_v1::document(base, rows);
    auto new_doc = base;
    new_doc.erase("run_id");
    std::vector<std::string> lines;
    for (const auto& r : old_doc["results"]) lines.push_back(result_row_line(r));
    const auto old_text = result_document_text(old_doc, lines);
    const auto p = write("v1.json", old_text);
    std::vector<ResultRow> streamed;
    const auto read = stream_result_file(p, [&](ResultRow&& r, std::size_t) { streamed.push_back(std::move(r)); });
    EXPECT_EQ(read.version, 1);
    auto header = new_doc;
    header["results"] = json::array();
    EXPECT_EQ(read.header, header);
    ASSERT_EQ(streamed.size(), rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(json(streamed[i]), json(rows[i])) << i;
    // Whole documents: as version 2 writes them.
    EXPECT_EQ(read_result_file(p), json(new_doc));
    EXPECT_EQ(parse_result_text(old_text, "v1.json"), json(new_doc));
    EXPECT_EQ(read_result_document(p), json(new_doc));
    // The analysis loader, from a file, from text and from a document in memory.
    for (const auto& loaded : {load_result(p), load_result_text("v1.json", old_text), result_from_json("v1.json", old_doc)}) {
      EXPECT_EQ(loaded.version, 1);
      EXPECT_EQ(loaded.doc, header);
      ASSERT_EQ(loaded.rows.size(), rows.size());
      for (std::size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(json(loaded.rows[i]), json(rows[i])) << i;
    }
  }
}

// A row of the other version than its file's is refused, by every reader, naming it.
TEST_F(ResultUpgradeFiles, MixedVersionsAreRefused) {
  auto now = minimal_result_doc();
  now["results"].push_back(testing_v1::row_json(sample_row()));
  auto old = testing_v1::minimal_doc();
  old["results"].push_back(json(sample_row()));
  const std::pair<json, std::string> cases[] = {{now, "/results/1: a version-1 row in a schema_version 2 file"},
                                                {old, "/results/1: a version-2 row in a schema_version 1 file"}};
  for (const auto& [doc, message] : cases) {
    const auto p = write("mixed.json", doc.dump());
    bool streamed = true;  // the streamed reader names the stray row; the others refuse it by the document's schema
    for (const auto& read : {std::function<void()>([&] { stream_result_file(p, [](ResultRow&&, std::size_t) {}); }),
                             std::function<void()>([&] { (void)read_result_file(p); }),
                             std::function<void()>([&] { (void)result_from_json("mixed.json", doc); })}) {
      try {
        read();
        ADD_FAILURE() << "read: " << message;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("mixed.json: does not match the result schema"), std::string::npos) << e.what();
        if (streamed) {
          EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
        }
      }
      streamed = false;
    }
  }
}

// compare: a version-1 baseline against a version-2 run gives the verdicts of two version-2 files.
TEST(ResultUpgrade, CompareAcrossVersions) {
  for (const auto& [va, vb] : {std::pair{100.0, 92.0}, {100.0, 99.0}, {100.0, 125.0}}) {
    auto a = sample_row(), b = sample_row();
    for (auto& rank : a.ranks) rank.value = rank.stats.median = rank.stats.lo = rank.stats.hi = va;
    for (auto& rank : b.ranks) rank.value = rank.stats.median = rank.stats.lo = rank.stats.hi = vb;
    a.aggregate = 2 * va;
    b.aggregate = 2 * vb;
    auto doc_a = minimal_result_doc(), doc_b = minimal_result_doc();
    doc_a["results"] = json::array({json(a)});
    doc_b["results"] = json::array({json(b)});
    const auto both_v2 = compare_results(result_from_json("a.json", doc_a), result_from_json("b.json", doc_b), 0.05);
    const auto v1a = result_from_json("a.json", testing_v1::document(minimal_result_doc(), {a}));
    const auto v2b = result_from_json("b.json", doc_b);
    ASSERT_EQ(v1a.version, 1);
    const auto across = compare_results(v1a, v2b, 0.05);
    ASSERT_EQ(across.rows.size(), 1u);
    ASSERT_EQ(both_v2.rows.size(), 1u);
    EXPECT_EQ(across.rows[0].verdict, both_v2.rows[0].verdict) << va << " vs " << vb;
  }
}

// merge: a version-1 input merged with a version-2 one is written as version 2, its rows with the
// per-rank statistics the version-1 file had.
TEST(ResultUpgrade, MergeAcrossVersionsWritesVersionTwo) {
  auto later = sample_row();
  later.gpu_count = 1;
  later.topology = "single";
  later.ranks.resize(1);
  auto doc_b = minimal_result_doc();
  doc_b["results"] = json::array({json(later)});
  const auto old = result_from_json("old.json", testing_v1::minimal_doc());
  const auto now = result_from_json("now.json", doc_b);
  const auto out = merge_results({{"old.json", old, ""}, {"now.json", now, ""}}, {{"gpuscale", "merge"}, "0.1.0", "def"});
  const json m = merged_document(out);
  EXPECT_EQ(m["schema_version"], 2);
  EXPECT_EQ(validate_result_json(m), "");
  ASSERT_EQ(m["results"].size(), 2u);
  for (const auto& row : m["results"]) {
    EXPECT_TRUE(row["ranks"].is_object());
    if (row["gpu_count"] == 2) {
      EXPECT_TRUE(row["ranks"].contains("stats"));  // the version-1 file had them
    }
  }
  std::vector<ResultRow> rows;
  const auto read = stream_result_text(merged_result_text(out), "m.json", [&](ResultRow&& r, std::size_t) { rows.push_back(r); });
  EXPECT_EQ(read.version, 2);
  EXPECT_EQ(rows.size(), out.rows.size());
}

// history: a version-1 file is stored as its version-2 twin would be, its own version recorded.
TEST(ResultUpgrade, HistoryRecordsVersionOneLikeVersionTwo) {
  const auto v1 = history::make_run_record(result_from_json("v1", testing_v1::minimal_doc()), "id");
  auto doc = minimal_result_doc();
  doc.erase("run_id");
  const auto v2 = history::make_run_record(result_from_json("v2", doc), "id");
  EXPECT_EQ(v1.file_version, 1);
  EXPECT_EQ(v2.file_version, 2);
  ASSERT_EQ(v1.rows.size(), v2.rows.size());
  ASSERT_EQ(v1.ranks.size(), v2.ranks.size());
  EXPECT_EQ(v1.hosts, v2.hosts);
  EXPECT_EQ(v1.rows[0].value, v2.rows[0].value);
}

}  // namespace
}  // namespace gpuscale
