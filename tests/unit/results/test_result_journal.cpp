// results/result_journal: what --resume and gpuscale seal take from a journal: whole lines of the
// file's own run and plan, once each; a cut-short last line, unreadable lines, repeated rows and rows
// of another plan named and left out; a journal of another run refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "test_seed.h"
#include "core/error.h"
#include "result_doc.h"
#include "results/result_journal.h"

namespace gpuscale {
namespace {

using nlohmann::json;

class Journal : public testing::Test {
 protected:
  // A row of point `elements` at `k` GPUs with random values.
  json row(int elements, int k) {
    auto r = testing_doc::sample_row();
    r.params["elements"] = elements;
    r.gpu_count = k;
    std::uniform_real_distribution<double> d(1, 500);
    for (auto& v : r.ranks) v.value = d(rng_);
    r.aggregate = d(rng_);
    json j = r;
    j["attempt"] = 0;
    return j;
  }
  // A file of run "run-a" planning points 1000 and 2000, holding `rows`.
  json doc(const std::vector<json>& rows) {
    auto d = testing_doc::minimal_result_doc();
    d["run_id"] = "run-a";
    d["plan"]["point_list"] = json::array();
    for (int e : {1000, 2000}) {
      auto p = row(e, 1);
      d["plan"]["point_list"].push_back({{"benchmark", p["benchmark"]}, {"params", p["params"]}});
    }
    d["results"] = rows;
    return d;
  }
  std::mt19937_64 rng_{test_seed()};
};

TEST_F(Journal, RefusesWhatIsNotAJournal) {
  EXPECT_THROW(parse_journal("", "j"), Error);
  EXPECT_THROW(parse_journal("{\"journal\": \"gpuscale.journal\"", "j"), Error);  // no whole first line
  EXPECT_THROW(parse_journal("{\"a\": 1}\n", "j"), Error);
  EXPECT_THROW(parse_journal("{\"journal\":\"gpuscale.journal\",\"version\":2,\"run_id\":\"x\"}\n", "j"), Error);
  try {
    parse_journal("[1, 2]\n", "my.journal");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("my.journal: not a gpuscale journal"), std::string::npos) << e.what();
  }
}

// A journal that is a link (a loop, a dangling one, or one to a real journal) or not a file at all is
// refused with exit 2, never taken for "no journal" (seal said "nothing to seal"; --resume rewrote the
// file, then failed writing through the link).
TEST_F(Journal, ALinkOrOtherNonRegularJournalIsRefused) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gpuscale-journal-" + std::to_string(rng_()));
  fs::create_directories(dir);
  const auto real = dir / "real.journal";
  std::ofstream(real) << journal_header_line("run-a", 0);
  ASSERT_TRUE(read_journal_file(real.string(), kMaxJournalBytes).has_value());
  EXPECT_FALSE(read_journal_file((dir / "none.journal").string(), kMaxJournalBytes).has_value());
  fs::create_symlink(dir / "loop.journal", dir / "loop.journal");
  fs::create_symlink(dir / "gone", dir / "dangling.journal");
  fs::create_symlink(real, dir / "link.journal");
  for (const char* name : {"loop.journal", "dangling.journal", "link.journal"}) {
    try {
      (void)read_journal_file((dir / name).string(), kMaxJournalBytes);
      ADD_FAILURE() << name << " was read";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitUsage) << name;
      EXPECT_NE(std::string(e.what()).find("a symbolic link"), std::string::npos) << e.what();
    }
  }
  fs::create_directory(dir / "dir.journal");
  try {
    (void)read_journal_file((dir / "dir.journal").string(), kMaxJournalBytes);
    ADD_FAILURE() << "a directory was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST_F(Journal, TakesWholeLinesAndNamesTheRest) {
  const auto a = row(1000, 1), b = row(1000, 2), c = row(2000, 1);
  std::string text = journal_header_line("run-a", 0) + a.dump() + "\n" + "{not json\n" + b.dump() + "\n";
  const std::string cut = c.dump();
  text += cut.substr(0, cut.size() / 2);  // the last write cut short
  const auto j = parse_journal(text, "j");
  EXPECT_EQ(j.run_id, "run-a");
  ASSERT_EQ(j.rows.size(), 2u);
  EXPECT_EQ(j.rows[1].first, 4u);
  EXPECT_EQ(j.rows[1].second, b);
  EXPECT_EQ(j.unreadable, std::vector<std::size_t>{3});
  EXPECT_EQ(j.truncated, std::vector<std::size_t>{5});
  auto d = doc({});
  const auto note = adopt_journal(d, j, "r.json");
  EXPECT_EQ(d["results"], json::array({a, b}));
  EXPECT_NE(note.find("took 2 row(s)"), std::string::npos) << note;
  EXPECT_NE(note.find("cut-short last line (line 5)"), std::string::npos) << note;
  EXPECT_NE(note.find("1 unreadable (line 3)"), std::string::npos) << note;
}

TEST_F(Journal, RepeatedRowsAndRowsOfAnotherPlanAreLeftOut) {
  const auto a = row(1000, 1), again = row(1000, 1), foreign = row(3000, 1), b = row(2000, 2);
  const auto text = journal_header_line("run-a", 1) + a.dump() + "\n" + again.dump() + "\n" + foreign.dump() + "\n" +
                    b.dump() + "\n";
  auto d = doc({});
  const auto note = adopt_journal(d, parse_journal(text, "j"), "r.json");
  EXPECT_EQ(d["results"], json::array({a, b}));  // the first copy of a row, never the second
  EXPECT_NE(note.find("1 repeated row(s) (line 3)"), std::string::npos) << note;
  EXPECT_NE(note.find("1 row(s) outside the file's plan (line 4)"), std::string::npos) << note;
}

TEST_F(Journal, RowsTheFileHoldsAreNoProblem) {
  const auto a = row(1000, 1), b = row(1000, 2);
  auto d = doc({a, b});  // sealed after the journal was written
  const auto text = journal_header_line("run-a", 0) + a.dump() + "\n" + b.dump() + "\n";
  EXPECT_EQ(adopt_journal(d, parse_journal(text, "j"), "r.json"), "");
  EXPECT_EQ(d["results"].size(), 2u);
}

TEST_F(Journal, AJournalOfAnotherRunIsRefused) {
  auto d = doc({});
  const auto text = journal_header_line("run-b", 0) + row(1000, 1).dump() + "\n";
  try {
    adopt_journal(d, parse_journal(text, "j"), "r.json");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("r.json.journal belongs to another run"), std::string::npos) << e.what();
  }
  d.erase("run_id");  // a file without an identity has no journal of its own
  EXPECT_THROW(adopt_journal(d, parse_journal(text, "j"), "r.json"), Error);
  EXPECT_TRUE(d["results"].empty());
}

TEST(JournalLines, ListsLineNumbersShortly) {
  EXPECT_EQ(line_list({4}), "line 4");
  EXPECT_EQ(line_list({4, 9}), "lines 4 and 9");
  EXPECT_EQ(line_list({1, 2, 3}), "lines 1, 2 and 3");
  EXPECT_EQ(line_list({1, 2, 3, 4, 5, 6, 7}, 3), "lines 1, 2, 3 and 4 more");
}

}  // namespace
}  // namespace gpuscale
