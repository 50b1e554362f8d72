// harness/burn_plan: a burn-in's windows (the kinds in turn, whole windows of the duration) and the
// refusals of its options: below one window, beyond a week, fewer windows than kinds, an unknown or
// repeated kind. Each refusal is one line naming the option.
#include <gtest/gtest.h>

#include "core/units.h"
#include "harness/benchmarks/burn/burn_plan.h"
#include "harness/guard/watchdog.h"
#include "harness/plan/plan_limits.h"
#include "harness/run/progress.h"
#include "usage_error.h"

namespace gpuscale {
namespace {

using test::has;
using test::usage_error;

TEST(BurnPlan, WindowsTakeTheKindsInTurn) {
  const auto plan = make_burn_plan(120, 10, {BurnKind::gemm, BurnKind::stream, BurnKind::mix});
  ASSERT_EQ(plan.windows.size(), 12u);
  EXPECT_EQ(plan.duration_s, 120);
  for (std::size_t i = 0; i < plan.windows.size(); ++i) {
    EXPECT_EQ(plan.windows[i].index, static_cast<int>(i));
    EXPECT_DOUBLE_EQ(plan.windows[i].start_s, 10.0 * static_cast<double>(i));
    EXPECT_EQ(plan.windows[i].seconds, 10);
  }
  EXPECT_EQ(plan.windows[0].kind, BurnKind::gemm);
  EXPECT_EQ(plan.windows[1].kind, BurnKind::stream);
  EXPECT_EQ(plan.windows[2].kind, BurnKind::mix);
  EXPECT_EQ(plan.windows[11].kind, BurnKind::mix);  // so each kind's series spans the whole burn-in
  EXPECT_EQ(burn_plan_line(plan), "the burn-in: 12 windows of 10s (gemm,stream,mix, in turn), 2m");
}

TEST(BurnPlan, TheDurationIsRoundedDownToWholeWindows) {
  EXPECT_EQ(make_burn_plan(25, 10, {BurnKind::mix}).windows.size(), 2u);
  EXPECT_EQ(make_burn_plan(25, 10, {BurnKind::mix}).duration_s, 20);
  // 20 minutes of 10-second windows are 120, whatever the floating point of 1200 / 10 says.
  EXPECT_EQ(make_burn_plan(parse_time_span("20m", "--duration"), 10, {BurnKind::mix}).windows.size(), 120u);
  EXPECT_EQ(make_burn_plan(0.3, 0.1, {BurnKind::mix}).windows.size(), 3u);
  EXPECT_EQ(make_burn_plan(10, 10, {BurnKind::mix}).windows.size(), 1u);  // exactly one window is enough
}

TEST(BurnPlan, RefusalsAreOneLineNamingTheOption) {
  const auto below = usage_error([] { (void)make_burn_plan(5, 10, {BurnKind::mix}); });
  EXPECT_TRUE(has(below, "--duration 5s is below one --window of 10s")) << below;
  const auto week = usage_error([] { (void)make_burn_plan(8 * 86400, 10, {BurnKind::mix}); });
  EXPECT_TRUE(has(week, "--duration 8d is beyond a week (7d)")) << week;
  EXPECT_NO_THROW((void)make_burn_plan(7 * 86400, 10, {BurnKind::mix}));  // a week itself is allowed
  const auto few = usage_error([] { (void)make_burn_plan(20, 10, {BurnKind::gemm, BurnKind::stream, BurnKind::mix}); });
  EXPECT_TRUE(has(few, "holds 2 windows of 10s, fewer than the 3 --burn kinds (gemm,stream,mix)")) << few;
  const auto longer = usage_error([] { (void)make_burn_plan(60, 120, {BurnKind::mix}); });
  EXPECT_TRUE(has(longer, "below one --window of 2m")) << longer;
  for (const auto& why : {below, week, few, longer}) EXPECT_EQ(why.find('\n'), std::string::npos) << why;
}

TEST(BurnPlan, Kinds) {
  EXPECT_EQ(parse_burn_kinds("gemm,stream,all_reduce,mix"),
            (std::vector<BurnKind>{BurnKind::gemm, BurnKind::stream, BurnKind::all_reduce, BurnKind::mix}));
  EXPECT_EQ(parse_burn_kinds("mix"), std::vector<BurnKind>{BurnKind::mix});
  EXPECT_EQ(burn_kinds_or_default({}), std::vector<BurnKind>{BurnKind::mix});
  EXPECT_TRUE(has(usage_error([] { (void)parse_burn_kinds("gemm,fryer"); }),
                  "unknown --burn kind 'fryer': expected gemm, stream, all_reduce or mix"));
  EXPECT_TRUE(has(usage_error([] { (void)parse_burn_kinds("gemm,gemm"); }), "--burn names gemm twice"));
  EXPECT_TRUE(has(usage_error([] { (void)parse_burn_kinds("gemm,"); }), "--burn"));
  for (BurnKind k : {BurnKind::gemm, BurnKind::stream, BurnKind::all_reduce, BurnKind::mix})
    EXPECT_EQ(burn_kind_of(burn_kind_name(k)), k);
}

// A window lasts its seconds on any device: the plan's estimate says so (2 minutes of windows are about
// 2 minutes, not a tenth of them as a device-rated point would be), and the watchdog waits 10 windows.
TEST(BurnPlan, AWindowIsEstimatedAtItsLength) {
  PointDemand d;
  d.fixed_s = 10;
  const std::vector<double> weights(12, row_weight(d, "cpu"));
  EXPECT_NEAR(plan_estimate_seconds(weights), 120, 12 * kProgressRowSeconds / kTypicalOverSlowRates + 1e-9);
  EXPECT_GE(watchdog_budget(d, "cpu", std::nullopt), 10 * kWatchdogMultiple);
  d.fixed_s = 600;  // a 10-minute window: 100 minutes before a stall is called
  EXPECT_DOUBLE_EQ(watchdog_budget(d, "cuda", std::nullopt), 600 * kWatchdogMultiple);
}

}  // namespace
}  // namespace gpuscale
