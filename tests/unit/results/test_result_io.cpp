// results/result_io and result_stream: validating reads, whole and a row at a time (every error names
// the file, and both readers refuse the same files the same way), atomic writes and the output-path
// check, in a fresh temporary directory per test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "core/error.h"
#include "result_doc.h"
#include "results/result_document.h"
#include "results/result_io.h"
#include "results/result_stream.h"

namespace gpuscale {
namespace {

namespace fs = std::filesystem;
using testing_doc::minimal_result_doc;

class ResultIo : public testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("gpuscale-unit-" + std::to_string(rd()) + std::to_string(rd()));
    ASSERT_TRUE(fs::create_directory(dir_));
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  fs::path write(const std::string& name, const std::string& text) const {
    const auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // read_result_file and stream_result_file must each throw a gpuscale::Error naming the file and the
  // problem.
  static void expect_read_error(const fs::path& p, const std::string& problem) {
    for (int streamed = 0; streamed < 2; ++streamed) {
      try {
        if (streamed) stream_result_file(p, [](ResultRow&&, std::size_t) {});
        else read_result_file(p);
        ADD_FAILURE() << p << " was accepted" << (streamed ? " (streamed)" : "");
      } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
        EXPECT_NE(msg.find(problem), std::string::npos) << msg;
      }
    }
  }

  fs::path dir_;
};

TEST_F(ResultIo, ReadsAValidFile) {
  const auto doc = minimal_result_doc();
  const auto p = write("ok.json", doc.dump(1));
  EXPECT_EQ(read_result_file(p), doc);
}

TEST_F(ResultIo, ReadErrorsNameTheFile) {
  expect_read_error(write("empty.json", ""), "empty");
  const auto text = minimal_result_doc().dump();
  expect_read_error(write("truncated.json", text.substr(0, text.size() / 2)), "not valid JSON");
  expect_read_error(write("garbage.json", "\x01\x02 not json"), "not valid JSON");
  expect_read_error(dir_, "directory");
  expect_read_error(dir_ / "missing.json", "no such file");
  expect_read_error(write("array.json", "[1, 2]"), "not a gpuscale result");
  expect_read_error(write("other.json", R"({"schema": "something.else", "schema_version": 1})"),
                    "not a gpuscale result");

  auto doc = minimal_result_doc();
  doc["schema_version"] = 3;
  expect_read_error(write("v3.json", doc.dump()), "schema_version 3 is newer than this gpuscale (reads 1 and 2)");
  doc["schema_version"] = 0;
  expect_read_error(write("v0.json", doc.dump()), "unsupported schema_version 0");
  doc["schema_version"] = "1";
  expect_read_error(write("v1string.json", doc.dump()), "unsupported schema_version");

  doc = minimal_result_doc();
  doc["results"][0]["aggregate"] = -5.0;
  expect_read_error(write("negative.json", doc.dump()), "does not match the result schema");
  doc = minimal_result_doc();
  doc.erase("plan");
  expect_read_error(write("noplan.json", doc.dump()), "does not match the result schema");
  // A row's problem names the row (a row of the other version: test_result_upgrade.cpp).
  doc = minimal_result_doc();
  doc["results"].push_back(doc["results"][0]);
  doc["results"][1]["ranks"]["value"][0] = "fast";
  expect_read_error(write("row1.json", doc.dump()), "[results][1]");
}

// Random rows written as gpuscale writes them (one per line) come back from the streamed reader in
// order, each as the whole-document reader converts it, and the header without them.
TEST_F(ResultIo, StreamedRowsMatchTheWholeDocument) {
  std::mt19937_64 rng(29);
  for (int round = 0; round < 2; ++round) {
    std::vector<ResultRow> rows;
    const int n = 1 + static_cast<int>(rng() % 30);
    for (int i = 0; i < n; ++i) {
      auto r = testing_doc::sample_row();
      r.gpu_count = 1 + static_cast<int>(rng() % 64);
      r.params["elements"] = static_cast<int>(rng() % 100000);
      r.aggregate = static_cast<double>(rng() % 100000) / 7;
      rows.push_back(r);
    }
    auto doc = minimal_result_doc();
    std::vector<std::string> lines;
    doc["results"] = rows;
    for (const auto& r : rows) lines.push_back(result_row_line(r));
    const auto p = write("rows.json", result_document_text(doc, lines));
    std::vector<ResultRow> got;
    // Random rows, not a run's (gpu_count beyond the world): their contradictions reported, not refused.
    const auto read = stream_result_file(
        p,
        [&](ResultRow&& r, std::size_t i) {
          EXPECT_EQ(i, got.size());
          got.push_back(std::move(r));
        },
        Contradictions::report);
    EXPECT_EQ(read.version, 2);
    EXPECT_EQ(read.rows, rows.size());
    EXPECT_EQ(read.header["results"], nlohmann::json::array());
    auto header = doc;
    header["results"] = nlohmann::json::array();
    EXPECT_EQ(read.header, header);
    const auto whole = read_result_file(p);
    ASSERT_EQ(got.size(), whole["results"].size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(row_key(got[i]), row_key(rows[i]));
      EXPECT_EQ(nlohmann::json(got[i]), nlohmann::json(whole["results"][i].get<ResultRow>()));
    }
  }
}

// read_result_file reads "schema" with json::value(key, std::string()), which throws nlohmann's
// type_error (not gpuscale::Error, so no file name and `gpuscale validate` stops) when "schema" is
// present but not a string. Disabled until results/result_io.cpp is fixed.
TEST_F(ResultIo, NonStringSchemaFieldIsAReadError) {
  expect_read_error(write("schema-number.json", R"({"schema": 5, "schema_version": 1})"), "not a gpuscale result");
}

TEST_F(ResultIo, AtomicWriteCreatesAndReplaces) {
  const auto p = dir_ / "out.json";
  write_file_atomic(p, "first\n");
  EXPECT_EQ(slurp(p), "first\n");
  const std::string big(300000, 'x');
  write_file_atomic(p, big);
  EXPECT_EQ(slurp(p), big);
  write_file_atomic(p, "");
  EXPECT_EQ(slurp(p), "");
  // Nothing else is left behind (no temporary files).
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    ++entries;
    EXPECT_EQ(e.path().filename(), "out.json");
  }
  EXPECT_EQ(entries, 1);
  const auto perms = fs::status(p).permissions();
  EXPECT_EQ(perms & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
}

TEST_F(ResultIo, AtomicWriteIntoAMissingDirectoryFails) {
  const auto p = dir_ / "no-such-dir" / "out.json";
  try {
    write_file_atomic(p, "x");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(p));
}

TEST_F(ResultIo, WrittenDocumentReadsBack) {
  auto doc = minimal_result_doc();
  doc["plan"]["seed"] = 9007199254740991ull;  // 2^53 - 1: exact through text
  const auto p = dir_ / "run.json";
  write_file_atomic(p, doc.dump(1) + "\n");
  EXPECT_EQ(read_result_file(p), doc);
}

TEST_F(ResultIo, OutputPathCheck) {
  EXPECT_NO_THROW(check_output_path(dir_ / "new.json"));
  write("existing.json", "{}");
  EXPECT_NO_THROW(check_output_path(dir_ / "existing.json"));

  const auto missing = dir_ / "nope" / "r.json";
  try {
    check_output_path(missing);
    ADD_FAILURE() << "missing directory accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos) << e.what();
    EXPECT_EQ(e.exit_code(), kExitUsage);
  }
  try {
    check_output_path(dir_);
    ADD_FAILURE() << "directory accepted as the output file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
  EXPECT_THROW(check_output_path(""), Error);
}

}  // namespace
}  // namespace gpuscale
