// analysis/result_set: rows agree with their rank lists and the file's world, and integers that do not
// fit are refused by the schema, not wrapped (every reader loads through here; issue 17).
#include <gtest/gtest.h>

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
  r7["ranks"][1]["rank"] = 7;
  EXPECT_NE(load_error(testing::doc_json({r7}, "Test GPU", 2)).find("rank 7 in a world of 2"), std::string::npos);
  // Rank 0 twice.
  auto twice = two_rank_row(2);
  twice["ranks"][1]["rank"] = 0;
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

}  // namespace
}  // namespace gpuscale
