// harness/plan_limits: a plan is refused before measuring when its estimate is past --max-time or its
// repetition samples past a rank's memory (--reps 1000000000 was taken, then failed with bad_alloc); the
// estimate is said in one line; --max-time takes 0 or a time with a unit.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "harness/options/run_option_values.h"
#include "harness/plan/plan_limits.h"
#include "harness/registry.h"
#include "harness/run/progress.h"
#include "usage_error.h"

namespace gpuscale {
namespace {

using test::has;
using test::usage_error;
constexpr std::uint64_t GiB = 1ULL << 30;

TEST(PlanLimits, TheEstimateAgainstMaxTime) {
  const PlanLimits day{};  // 24 h, memory unknown
  EXPECT_EQ(day.max_time_s, 86400);
  EXPECT_FALSE(plan_size_refusal({3600, 10, 0}, day));
  EXPECT_FALSE(plan_size_refusal({86400, 10, 0}, day));  // the limit itself is allowed
  const auto why = plan_size_refusal({86401, 10, 0}, day);
  ASSERT_TRUE(why);
  EXPECT_TRUE(has(*why, "more than --max-time 24:00:00")) << *why;
  EXPECT_TRUE(has(*why, "10 rows")) << *why;
  EXPECT_TRUE(has(*why, "1 days")) << *why;
  // 0: no limit, whatever the estimate.
  EXPECT_FALSE(plan_size_refusal({1e30, 10, 0}, {0, 0}));
  // An estimate that is not a number is never within a limit.
  EXPECT_TRUE(plan_size_refusal({std::nan(""), 1, 0}, day));
  EXPECT_TRUE(plan_size_refusal({std::numeric_limits<double>::infinity(), 1, 0}, day));
  EXPECT_TRUE(has(*plan_size_refusal({1e300, 1, 0}, day), "more than 10^15 s"));
}

TEST(PlanLimits, RepetitionSamplesAgainstMemory) {
  const PlanLimits mem{0, 8 * GiB};
  EXPECT_FALSE(plan_size_refusal({1, 1, 1000}, mem));
  EXPECT_FALSE(plan_size_refusal({1, 1, 8 * GiB / kBytesPerRepetition}, mem));
  const auto why = plan_size_refusal({1, 1, 1000000000}, mem);
  ASSERT_TRUE(why);
  EXPECT_TRUE(has(*why, "--reps 1000000000")) << *why;
  EXPECT_TRUE(has(*why, "8.00 GiB")) << *why;
  EXPECT_FALSE(plan_size_refusal({1, 1, 1000000000}, {0, 0}));  // memory unknown: not checked
  EXPECT_TRUE(plan_size_refusal({1, 1, UINT64_MAX}, mem));      // no wrap
}

TEST(PlanLimits, TheLineSaysTheEstimate) {
  EXPECT_EQ(plan_estimate_line({65, 24, 0}, {}), "the plan: 24 rows, estimated 1:05 on a typical device (--max-time 24:00:00)");
  EXPECT_EQ(plan_estimate_line({90000, 1, 0}, {0, 0}), "the plan: 1 rows, estimated 1 days on a typical device (--max-time no limit)");
  EXPECT_DOUBLE_EQ(plan_estimate_seconds({10, 20, 30}), 60 / kTypicalOverSlowRates);
}

// The run's check on a real plan's weights: STREAM with a billion repetitions is refused before anything
// is measured, naming --max-time; the default repetitions are estimated and pass.
TEST(PlanLimits, ABillionRepetitionsAreRefused) {
  RunOptions o;
  const nlohmann::json points = {{{"benchmark", "stream.triad"},
                                  {"params", {{"dtype", "fp64"}, {"elements", 1 << 20}, {"array_bytes", 8 << 20}}}}};
  auto weights = [&] {
    return plan_row_weights(points, {false}, DemandContext{o, "cpu", 1}, [](const Benchmark&) { return std::size_t{1}; });
  };
  std::string line;
  EXPECT_EQ(usage_error([&] { line = check_plan_size(weights(), o, 64 * GiB); }), "");
  EXPECT_TRUE(has(line, "the plan: 1 rows, estimated 0:0")) << line;
  o.reps = 1000000000;
  const auto why = usage_error([&] { (void)check_plan_size(weights(), o, 64 * GiB); });
  EXPECT_TRUE(has(why, "more than --max-time 24:00:00")) << why;
  o.max_time_s = 0;  // no time limit: the samples' memory still refuses it on a small rank
  EXPECT_TRUE(has(usage_error([&] { (void)check_plan_size(weights(), o, 4 * GiB); }), "--reps 1000000000"));
  EXPECT_EQ(usage_error([&] { (void)check_plan_size(weights(), o, 64 * GiB); }), "");
}

TEST(PlanLimits, MaxTimeText) {
  EXPECT_EQ(parse_max_time("0", "--max-time"), 0);
  EXPECT_EQ(parse_max_time("3600", "--max-time"), 3600);
  EXPECT_EQ(parse_max_time("90m", "--max-time"), 5400);
  EXPECT_EQ(parse_max_time("24h", "--max-time"), 86400);
  EXPECT_EQ(parse_max_time("2d", "--max-time"), 172800);
  EXPECT_EQ(parse_max_time("1.5h", "--max-time"), 5400);
  EXPECT_EQ(parse_max_time("30s", "--max-time"), 30);
  for (const char* bad : {"", "-1", "h", "1x", "1..2", "1e3", "0h", "inf", "1h2", " 1h"})
    EXPECT_TRUE(has(usage_error([&] { (void)parse_max_time(bad, "--max-time"); }), "invalid --max-time")) << bad;
}

}  // namespace
}  // namespace gpuscale
