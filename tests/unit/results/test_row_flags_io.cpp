// results/: a row's flags are written, validated and read back; a collective row at one GPU (no
// bandwidth: value, algbw and busbw null, its time kept) is a valid row of the schema.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "harness/rows/row_builder.h"
#include "result_doc.h"
#include "results/result_io.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

using testing_doc::minimal_result_doc;
using testing_doc::sample_row;

// The row the row builder makes of a collective at one rank (harness/benchmarks/collectives.cpp):
// no repetitions in GB/s, no aggregate, its time and a null bandwidth in the metrics.
ResultRow one_gpu_collective(double time_us) {
  RowInputs in;
  in.benchmark = "broadcast";
  in.scope = Scope::collective;
  in.unit = "GB/s";
  in.params = {{"dtype", "fp32"}, {"size_bytes", 8192}, {"placement", "in-place"}, {"root", 0}};
  in.gpu_count = 1;
  in.topology = "single";
  in.peak = {std::nullopt, "one rank: no link is crossed"};
  RankEntry e;
  e.host = "node0";
  RankMeasurement m;
  m.metrics = {{"time_us", time_us}, {"wrong", 0}};
  m.row_metrics = {{"size_bytes", 8192}, {"time_us", time_us}, {"algbw", nullptr}, {"busbw", nullptr}, {"wrong", 0}};
  e.m = summarize(m, true);
  in.ranks.push_back(e);
  return build_row(in);
}

TEST(RowFlagsIo, FlagsAreWrittenOnlyWhenPresentAndReadBack) {
  auto row = sample_row();
  nlohmann::json j = row;
  EXPECT_FALSE(j.contains("flags")) << "no flags, no field: files without them are unchanged";
  std::mt19937_64 rng(test_seed());
  const auto pct = std::uniform_int_distribution<int>(120, 400)(rng);
  row.flags = {{"superlinear", "scaling efficiency " + std::to_string(pct) + "%"}, {"quick", "a --quick point"}};
  j = row;
  ASSERT_TRUE(j.contains("flags"));
  EXPECT_EQ(j["flags"][0]["kind"], "superlinear");
  const ResultRow back = j.get<ResultRow>();
  EXPECT_EQ(back.flags, row.flags);
  auto doc = minimal_result_doc();
  doc["results"] = nlohmann::json::array({j});
  EXPECT_EQ(validate_result_json(doc), "");
  // A kind this reader does not know is kept, not refused (readers ignore what they do not know).
  doc["results"][0]["flags"].push_back({{"kind", "from_the_future"}, {"reason", ""}});
  EXPECT_EQ(validate_result_json(doc), "");
  doc["results"][0]["flags"][0].erase("kind");
  EXPECT_NE(validate_result_json(doc), "") << "a flag names its kind";
}

TEST(RowFlagsIo, OneGpuCollectiveHasATimeAndNoBandwidth) {
  std::mt19937_64 rng(test_seed());
  const double t = std::uniform_real_distribution<double>(0.01, 50)(rng);
  const ResultRow row = one_gpu_collective(t);
  EXPECT_EQ(row.status, RowStatus::ok);
  EXPECT_FALSE(row.aggregate);
  EXPECT_FALSE(row.fraction_of_peak);
  EXPECT_FALSE(row.scaling_efficiency);
  ASSERT_EQ(row.ranks.size(), 1u);
  EXPECT_FALSE(row.ranks[0].value);
  EXPECT_TRUE(row.metrics["busbw"].is_null());
  EXPECT_DOUBLE_EQ(row.metrics["time_us"].get<double>(), t);
  auto doc = minimal_result_doc();
  doc["results"] = nlohmann::json::array({nlohmann::json(row)});
  EXPECT_EQ(validate_result_json(doc), "");
  const ResultRow back = nlohmann::json(row).get<ResultRow>();
  EXPECT_FALSE(back.aggregate);
  EXPECT_TRUE(back.metrics["algbw"].is_null());
  // A bandwidth may be null, never negative or text.
  doc["results"][0]["metrics"]["busbw"] = -1.0;
  EXPECT_NE(validate_result_json(doc), "");
}

}  // namespace
}  // namespace gpuscale
