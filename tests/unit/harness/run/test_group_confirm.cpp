// Sequential tiling's third turn (harness/run/group_confirm.h): which groups are measured once more.
#include "harness/run/group_confirm.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "test_seed.h"

namespace gpuscale {
namespace {

const double kNaN = std::nan("");

TEST(GroupConfirm, TheGroupsBelowHalfTheFractionLowestFirstUpToTheCap) {
  // Median 9.75; at fraction 0.1 the net is 5% below it (9.26).
  const std::vector<double> f = {10, 9.6, 7, 10.2, 9.2, 10.1, 5, 9.9};
  EXPECT_EQ(groups_to_confirm(f, 0.1, 8), (std::vector<std::size_t>{6, 2, 4}));
  EXPECT_EQ(groups_to_confirm(f, 0.1, 2), (std::vector<std::size_t>{6, 2}));
  // 20%: the net is 10% below (8.78).
  EXPECT_EQ(groups_to_confirm(f, 0.2, 8), (std::vector<std::size_t>{6, 2}));
}

TEST(GroupConfirm, AFailedOrWrongGroupIsNeverMeasuredAgainAndSmallPopulationsNameNone) {
  // NaN: a failed, wrong or skipped pass is kept as it is; it is not in the population either.
  EXPECT_EQ(groups_to_confirm({10, kNaN, 10, 3, 10}, 0.1, 8), (std::vector<std::size_t>{3}));
  EXPECT_TRUE(groups_to_confirm({10, 3}, 0.1, 8).empty());
  EXPECT_TRUE(groups_to_confirm({10, 3, kNaN, 0}, 0.1, 8).empty());
  EXPECT_TRUE(groups_to_confirm({}, 0.1, 8).empty());
}

TEST(GroupConfirm, HealthyNoiseWithinTheNetTakesNoTurnAndAPlantedSlowGroupAlwaysDoes) {
  std::mt19937_64 rng(test_seed());
  std::uniform_real_distribution<double> noise(0.975, 1.025);  // within 2.5%: never 5% below the median
  std::uniform_int_distribution<std::size_t> pick(0, 15);
  for (int trial = 0; trial < 1000; ++trial) {
    std::vector<double> f(16);
    for (auto& v : f) v = 40 * noise(rng);
    ASSERT_TRUE(groups_to_confirm(f, 0.1, confirm_cap(f.size())).empty()) << trial;
    const std::size_t slow = pick(rng);
    f[slow] *= 0.9;  // a 10% slow group: beyond the 5% net whatever the noise
    ASSERT_EQ(groups_to_confirm(f, 0.1, confirm_cap(f.size())), std::vector<std::size_t>{slow}) << trial;
  }
}

TEST(GroupConfirm, TheCapIsAnEighthOfTheGroupsAtLeastTwo) {
  EXPECT_EQ(confirm_cap(1), 2u);
  EXPECT_EQ(confirm_cap(16), 2u);
  EXPECT_EQ(confirm_cap(64), 8u);
  EXPECT_EQ(confirm_cap(4096), 512u);
}

}  // namespace
}  // namespace gpuscale
