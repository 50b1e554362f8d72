// analysis/result_set: rows agree with their rank lists and the file's world, and integers that do not
// fit are refused by the schema, not wrapped (every reader loads through here; issue 17).
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include <fmt/format.h>

#include "test_seed.h"
#include "analysis/row_checks.h"
#include "analysis_fixtures.h"
#include "core/error.h"

namespace gpuscale {
namespace {

std::string load_error(const nlohmann::json& doc) {
  try {
    result_from_json("f.json", doc);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

nlohmann::json two_rank_row(int k) {
  return testing::row_json("stream.triad", "independent", {{"dtype", "fp64"}}, k, {1.0, 2.0});
}

TEST(RowWorld, ARowThatAgreesWithItsWorldLoads) {
  EXPECT_EQ(load_error(testing::doc_json({two_rank_row(2)}, "Test GPU", 2)), "");
}

TEST(RowWorld, RanksAndCountsOutsideTheWorldAreRefused) {
  // gpu_count 64 in a world of 2.
  EXPECT_NE(load_error(testing::doc_json({two_rank_row(64)}, "Test GPU", 2)).find("gpu_count 64 in a world of 2"),
            std::string::npos);
  // Rank 7 in a world of 2.
  auto r7 = two_rank_row(2);
  r7["ranks"]["rank"][1] = 7;
  EXPECT_NE(load_error(testing::doc_json({r7}, "Test GPU", 2)).find("rank 7 in a world of 2"), std::string::npos);
  // Rank 0 twice.
  auto twice = two_rank_row(2);
  twice["ranks"]["rank"][1] = 0;
  EXPECT_NE(load_error(testing::doc_json({twice}, "Test GPU", 2)).find("rank 0 is listed twice"), std::string::npos);
}

TEST(RowWorld, IntegersBeyond32BitsAreRefusedNotWrapped) {
  // As a file's text parses them (unsigned when positive), and negative ones that would wrap to 1.
  for (const auto& big : {nlohmann::json::parse("4294967297"), nlohmann::json::parse("2147483648"),
                          nlohmann::json::parse("-4294967295"), nlohmann::json(4294967297LL)}) {
    auto doc = testing::doc_json({two_rank_row(2)}, "Test GPU", 2);  // written as version 2: rank columns
    doc["results"][0]["gpu_count"] = big;
    const auto e = load_error(doc);
    EXPECT_NE(e.find("f.json"), std::string::npos) << big << ": " << e;
    auto rank = testing::doc_json({two_rank_row(2)}, "Test GPU", 2);
    ASSERT_TRUE(rank["results"][0]["ranks"]["rank"].is_array());
    rank["results"][0]["ranks"]["rank"][1] = big;
    EXPECT_NE(load_error(rank).find("f.json"), std::string::npos) << big;
  }
}

// An ok row measured on gpu_count ranks lists all of them, in both versions (a version-2 row's rank
// columns, a version-1 row's array); a failed or skipped row may list fewer (a rank that never started).
TEST(RowWorld, AnOkRowListsEveryRankOfItsGpuCount) {
  std::mt19937 rng(test_seed());
  const int k = 2 + static_cast<int>(rng() % 6);
  const int listed = 1 + static_cast<int>(rng() % static_cast<unsigned>(k - 1));
  std::vector<double> values;
  for (int i = 0; i < listed; ++i) values.push_back(1 + rng() % 1000);
  {
    auto row = testing::row_json("stream.triad", "independent", {{"dtype", "fp64"}}, k, values);
    const auto e = load_error(testing::doc_json({row}, "Test GPU", 8, "c"));
    EXPECT_NE(e.find(fmt::format("f.json: /results/0: an ok row at {} GPUs lists {} rank", k, listed)), std::string::npos) << e;
    row["status"] = "failed";
    row["aggregate"] = nullptr;
    row["errors"] = {"rank 1 did not start"};
    EXPECT_EQ(load_error(testing::doc_json({row}, "Test GPU", 8, "c")), "");
  }
  // The same check for a reader that keeps rows as JSON (--resume), with the world too.
  auto whole = testing::row_json("stream.triad", "independent", {{"dtype", "fp64"}}, k, values).get<ResultRow>();
  EXPECT_THROW(check_result_row("--resume r.json", whole, 3, 8), Error);
  whole.gpu_count = listed;
  EXPECT_NO_THROW(check_result_row("--resume r.json", whole, 3, 8));
  try {
    check_result_row("--resume r.json", whole, 3, listed - 1 > 0 ? listed - 1 : 0);
    FAIL() << "a row beyond its world was accepted";
  } catch (const Error& err) {
    EXPECT_EQ(std::string(err.what()).rfind("--resume r.json: /results/3: gpu_count", 0), 0u) << err.what();
  }
}

// Times and values are non-negative and finite for every reader: a negative time_us, a negative rank
// value and a negative aggregate are refused naming the row and the field.
TEST(RowWorld, NegativeFiguresAreRefused) {
  std::mt19937 rng(test_seed());
  const double negative = -1.0 - static_cast<double>(rng() % 100000) / 7;
  auto time = two_rank_row(2);
  time["metrics"]["time_us"] = negative;
  EXPECT_NE(load_error(testing::doc_json({time}, "Test GPU", 2)).find("/results/0/metrics/time_us must be a non-negative"),
            std::string::npos);
  auto rank_time = two_rank_row(2);
  rank_time["ranks"]["metrics"]["time_us"] = {1.0, negative};  // a column: rank 1's entry
  EXPECT_NE(load_error(testing::doc_json({rank_time}, "Test GPU", 2)).find("(rank 1)/metrics/time_us"),
            std::string::npos);
  auto value = two_rank_row(2).get<ResultRow>();
  value.ranks[1].value = negative;
  EXPECT_THROW(check_result_row("f.json", value, 0, 2), Error);
  auto aggregate = two_rank_row(2).get<ResultRow>();
  aggregate.aggregate = negative;
  try {
    check_result_row("f.json", aggregate, 0, 2);
    FAIL() << "a negative aggregate was accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("/results/0/aggregate must be a non-negative number"), std::string::npos);
  }
  aggregate.aggregate = std::numeric_limits<double>::infinity();
  EXPECT_THROW(check_result_row("f.json", aggregate, 0, 2), Error);
  aggregate.aggregate = std::numeric_limits<double>::max();  // finite: a reader takes it
  EXPECT_NO_THROW(check_result_row("f.json", aggregate, 0, 2));
}

}  // namespace
}  // namespace gpuscale
