// harness/guard/result_keeper: the file written at the start and at the end, rows appended to the journal
// in between, the first write never over an existing file unless asked, the seal an abnormal ending puts
// on the file (once; later calls dropped), and the bytes written kept under three times the file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "test_seed.h"
#include "core/error.h"
#include "harness/guard/result_keeper.h"
#include "results/result_journal.h"

namespace gpuscale {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class Keeper : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpuscale-keeper-" + std::to_string(rng_()));
    fs::create_directory(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string text(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static json read(const fs::path& p) { return json::parse(text(p)); }
  // A row line with a random value (point, gpu count).
  ResultKeeper::Line row(std::size_t point, int k) {
    const json r = {{"benchmark", "b"}, {"params", {{"p", point}}}, {"gpu_count", k}, {"status", "ok"},
                    {"value", std::uniform_real_distribution<double>(1, 100)(rng_)}};
    return {point, k, r.dump()};
  }
  fs::path dir_;
  std::mt19937_64 rng_{test_seed()};
};

TEST_F(Keeper, AppendsToTheJournalAndWritesTheFileAtTheEnd) {
  ResultKeeper k;
  const auto path = dir_ / "r.json";
  k.open(path.string(), false, {{"summary", {{"complete", false}}}}, {}, "run-1", 0);
  EXPECT_TRUE(read(path)["results"].empty());  // valid from the first moment, no rows yet
  const auto a = row(0, 1), b = row(0, 2), c = row(1, 1);
  k.append({a, b}, {{"complete", false}, {"rows", 2}});
  k.append({c}, {{"complete", false}, {"rows", 3}});
  EXPECT_TRUE(read(path)["results"].empty());  // the file is not rewritten per point
  const auto journal = parse_journal(text(k.journal_path()), "j");
  EXPECT_EQ(journal.run_id, "run-1");
  ASSERT_EQ(journal.rows.size(), 3u);
  EXPECT_EQ(journal.rows[2].second, json::parse(c.text));
  EXPECT_EQ(journal.rows[2].first, 4u);  // line numbers count the header line
  k.finish({{"summary", {{"complete", true}}}});
  const auto done = read(path);
  ASSERT_EQ(done["results"].size(), 3u);
  EXPECT_EQ(done["results"][1], json::parse(b.text));
  EXPECT_EQ(done["summary"]["complete"], true);
  EXPECT_FALSE(fs::exists(k.journal_path()));  // the file holds every row now
  // The count is exact and includes the final write itself.
  const auto written = done["reliability"]["bytes_written"].get<std::uintmax_t>();
  EXPECT_EQ(written, k.bytes_written());
  const auto size = fs::file_size(path);
  EXPECT_GT(written, size);
  EXPECT_LT(written, 3 * size);
}

TEST_F(Keeper, KeptRowsAndNewRowsEndInPlanOrder) {
  ResultKeeper k;
  const auto path = dir_ / "r.json";
  const auto kept = row(2, 1), late = row(0, 1), mid = row(1, 2);
  k.open(path.string(), false, json::object(), {kept}, "run-1", 1);
  EXPECT_EQ(read(path)["results"], json::array({json::parse(kept.text)}));
  k.append({mid}, json::object());
  k.append({late}, json::object());
  k.finish(json::object());
  EXPECT_EQ(read(path)["results"], json::array({json::parse(late.text), json::parse(mid.text), json::parse(kept.text)}));
}

TEST_F(Keeper, SealsOnceWithEveryRowAppended) {
  ResultKeeper k;
  const auto path = dir_ / "r.json";
  std::string error;
  EXPECT_FALSE(k.seal([](json&) {}, &error));  // nothing written yet: nothing to seal
  k.open(path.string(), false, {{"summary", {{"complete", false}}}}, {}, "run-1", 0);
  const auto a = row(0, 1), b = row(1, 1);
  k.append({a}, {{"complete", false}, {"rows", 1}});
  k.append({b}, {{"complete", false}, {"rows", 2}});
  EXPECT_TRUE(k.seal([](json& d) { d["summary"]["exit_code"] = 6; }, &error)) << error;
  const auto sealed = read(path);
  EXPECT_EQ(sealed["results"].size(), 2u);
  EXPECT_EQ(sealed["summary"]["exit_code"], 6);
  EXPECT_EQ(sealed["summary"]["rows"], 2);  // the summary the last append gave
  // Sealed: the run loop's calls and a second seal change nothing.
  k.append({row(2, 1)}, json::object());
  k.finish({{"summary", {{"complete", true}}}});
  EXPECT_FALSE(k.seal([](json& d) { d["summary"]["exit_code"] = 5; }, &error));
  EXPECT_EQ(read(path), sealed);
}

TEST_F(Keeper, FirstWriteNeverReplacesUnlessAsked) {
  const auto path = dir_ / "exists.json";
  std::ofstream(path) << "{\"keep\": true}";
  ResultKeeper k;
  EXPECT_THROW(k.open(path.string(), false, {{"new", true}}, {}, "r", 0), Error);
  EXPECT_EQ(read(path), json({{"keep", true}}));
  ResultKeeper forced;
  forced.open(path.string(), true, {{"new", 1}}, {}, "r", 0);
  forced.finish({{"new", 2}});  // the end replaces the run's own file
  EXPECT_EQ(read(path)["new"], 2);
}

TEST_F(Keeper, SealFailureIsReported) {
  ResultKeeper k;
  const auto path = dir_ / "gone" / "r.json";
  fs::create_directory(dir_ / "gone");
  k.open(path.string(), false, {{"a", 1}}, {}, "r", 0);
  fs::remove_all(dir_ / "gone");  // the directory vanished under the run
  std::string error;
  EXPECT_FALSE(k.seal([](json&) {}, &error));
  EXPECT_NE(error.find("cannot write"), std::string::npos) << error;
}

// The bound holds whatever the plan: many small points, few large ones.
TEST_F(Keeper, BytesWrittenStayUnderThreeTimesTheFile) {
  for (int points : {1, 7, 200}) {
    ResultKeeper k;
    const auto path = dir_ / ("r" + std::to_string(points) + ".json");
    json header = {{"ranks", json::array()}};
    for (int r = 0; r < 64; ++r) header["ranks"].push_back({{"rank", r}, {"host", "node-with-a-long-name"}});
    k.open(path.string(), false, header, {}, "r", 0);
    for (int p = 0; p < points; ++p) k.append({row(static_cast<std::size_t>(p), 1), row(static_cast<std::size_t>(p), 2)}, json::object());
    k.finish(header);
    EXPECT_LT(k.bytes_written(), 3 * fs::file_size(path)) << points;
  }
}

}  // namespace
}  // namespace gpuscale
