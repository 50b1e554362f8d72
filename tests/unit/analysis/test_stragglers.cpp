#include <gtest/gtest.h>

#include "analysis/stragglers.h"
#include "analysis_fixtures.h"
#include "results/result_io.h"

namespace gpuscale {
namespace {

using testing::doc_json;
using testing::loaded;
using testing::row_json;
using testing::with_status;

const nlohmann::json kTriad = {{"dtype", "fp64"}, {"array_bytes", 1024}};

TEST(Stragglers, NamesRanksMoreThanThresholdBelowTheMedian) {
  // median of {100, 101, 99, 100, 80, 89.5, 100, 102} is 100: rank 4 is 20% below, rank 5 10.5% below.
  auto run = loaded({row_json("stream.triad", "independent", kTriad, 8, {100, 101, 99, 100, 80, 89.5, 100, 102})});
  auto s = find_stragglers(run.doc, run.rows, 0.10);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].rank, 4);
  EXPECT_EQ(s[0].host, "h1");
  EXPECT_EQ(s[0].uuid, "GPU-4");
  EXPECT_EQ(s[0].pci_bus_id, "0000:04:00.0");
  EXPECT_NEAR(s[0].deficit, 0.20, 1e-12);
  EXPECT_NEAR(s[0].median, 100, 1e-12);
  EXPECT_EQ(s[1].rank, 5);
  EXPECT_EQ(find_stragglers(run.doc, run.rows, 0.15).size(), 1u);  // only rank 4 is more than 15% below
  EXPECT_EQ(find_stragglers(run.doc, run.rows, 0.25).size(), 0u);
}

TEST(Stragglers, CollectivesSingleRanksAndBadRowsAreNotJudged) {
  auto coll = row_json("all_reduce", "collective", {{"size_bytes", 1024}}, 4, {10, 10, 5, 10});
  auto single = row_json("stream.triad", "independent", kTriad, 1, {50});
  auto invalid = with_status(row_json("stream.copy", "independent", kTriad, 4, {10, 10, 1, 10}), "invalid");
  auto run = loaded({coll, single, invalid});
  EXPECT_TRUE(find_stragglers(run.doc, run.rows, 0.10).empty());
}

TEST(Stragglers, MissingDeviceDetailsPrintDash) {
  auto doc = doc_json({row_json("stream.triad", "independent", kTriad, 4, {10, 10, 5, 10})});
  for (auto& r : doc["ranks"]) r["device"]["details"] = nlohmann::json::object();
  auto run = result_from_json("t", doc);
  auto s = find_stragglers(run.doc, run.rows, 0.10);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].uuid, "-");
  EXPECT_EQ(s[0].pci_bus_id, "-");
}

TEST(Stragglers, AnalysisSectionMatchesTheSchema) {
  auto doc = doc_json({row_json("stream.triad", "independent", kTriad, 4, {10, 10, 5, 10})});
  auto run = result_from_json("t", doc);
  doc["analysis"] = straggler_analysis(run.doc, run.rows);
  EXPECT_EQ(validate_result_json(doc), "");
  ASSERT_EQ(doc["analysis"]["stragglers"].size(), 1u);
  EXPECT_EQ(doc["analysis"]["stragglers"][0]["rank"], 2);
  EXPECT_DOUBLE_EQ(doc["analysis"]["straggler_threshold"].get<double>(), 0.10);
  doc["analysis"]["stragglers"][0].erase("uuid");
  EXPECT_NE(validate_result_json(doc), "");
}

}  // namespace
}  // namespace gpuscale
