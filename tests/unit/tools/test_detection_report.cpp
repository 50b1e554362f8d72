// The detection-power results printed (tools/detection_power/detection_report.h): the table as JSON and
// text, a replayed trial told the same twice with its planted thing NAMED, and the Wilson intervals.
#include "tools/detection_power/detection_report.h"

#include <gtest/gtest.h>

#include "test_seed.h"

namespace gpuscale::detection {
namespace {

PowerConfig small(std::uint64_t seed) {
  PowerConfig c;
  c.shape = {64, 8};
  c.seed = seed;
  c.trials = 3;
  c.noise.storage_spread = c.noise.gemm.spread;  // as test_detection_power.cpp's: a halved node always named
  return c;
}

TEST(DetectionReport, TheTableAsJsonAndText) {
  const auto c = small(test_seed());
  const auto t = measure_power(c);
  const auto j = table_json(t);
  ASSERT_EQ(j["rows"].size(), t.rows.size());
  EXPECT_EQ(j["clean"].size(), t.clean.size());
  EXPECT_EQ(j["seed"], c.seed);
  EXPECT_EQ(j["rows"][0]["fault"], fault_kind_name(t.rows[0].fault));
  EXPECT_EQ(j["rows"][3]["size"], 0.5);
  EXPECT_EQ(j["rows"][3]["rate"], 1.0);  // the first kind (slow-gpu) at 50%
  const auto text = table_text(t);
  EXPECT_NE(text.find("seed " + std::to_string(c.seed)), std::string::npos);
  EXPECT_NE(text.find("fleet (all)"), std::string::npos);
}

TEST(DetectionReport, AReplayedTrialTellsWhatItPlantedAndNamed) {
  auto c = small(test_seed());
  c.faults = {FaultKind::slow_link};
  c.sizes = {0.5};
  const auto text = trial_text(c, 7);
  EXPECT_EQ(text, trial_text(c, 7));
  Trial t(c, trial_seed(c.seed, 7));
  const auto link = link_id(host_name(t.places().link_node), t.places().link_a, t.places().link_b);
  const auto at = text.find(link);
  ASSERT_NE(at, std::string::npos) << text;
  const auto line = text.substr(at, text.find('\n', at) - at);
  EXPECT_NE(line.find(" NAMED; wrong: nothing"), std::string::npos) << text;
}

TEST(DetectionReport, WilsonIntervals) {
  const auto [lo0, hi0] = wilson_interval(0, 200);
  EXPECT_EQ(lo0, 0);
  EXPECT_NEAR(hi0, 0.0188, 1e-4);
  const auto [lo, hi] = wilson_interval(100, 200);
  EXPECT_NEAR(lo, 0.4314, 1e-4);
  EXPECT_NEAR(hi, 0.5686, 1e-4);
  const auto [lo1, hi1] = wilson_interval(200, 200);
  EXPECT_NEAR(lo1, 0.9812, 1e-4);
  EXPECT_EQ(hi1, 1);
}

}  // namespace
}  // namespace gpuscale::detection
