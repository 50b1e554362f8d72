// analysis/result_set: a collective row at one GPU, whose algbw and busbw are null (nothing crosses a
// link), loads; any other non-number there is still refused.
#include <gtest/gtest.h>

#include "analysis_fixtures.h"
#include "core/error.h"

namespace gpuscale {
namespace {

nlohmann::json doc_with_bandwidth(const nlohmann::json& busbw) {
  auto row = testing::row_json("all_reduce", "collective", {{"dtype", "fp32"}, {"size_bytes", 4096}}, 1, {1.0});
  row["aggregate"] = nullptr;
  row["ranks"]["value"][0] = nullptr;
  row["metrics"] = {{"time_us", 3.5}, {"algbw", nullptr}, {"busbw", busbw}, {"size_bytes", 4096}};
  return testing::doc_json({row});  // the row as gpuscale writes it (version 2)
}

TEST(NullBandwidth, OneGpuCollectiveRowsLoad) {
  const auto loaded = result_from_json("one.json", doc_with_bandwidth(nullptr));
  ASSERT_EQ(loaded.rows.size(), 1u);
  EXPECT_FALSE(loaded.rows[0].aggregate);
  EXPECT_TRUE(loaded.rows[0].metrics["busbw"].is_null());
  EXPECT_THROW(result_from_json("bad.json", doc_with_bandwidth("fast")), Error);
}

}  // namespace
}  // namespace gpuscale
