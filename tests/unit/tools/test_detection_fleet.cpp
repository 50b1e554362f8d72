// The synthetic fleets of detection power (tools/detection_power/detection_fleet.h): one seed, one fleet; a planted
// fault changes only the faulty thing; the faults' definitions (throughput x (1 - size)); identities.
#include "tools/detection_power/detection_fleet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "test_seed.h"

namespace gpuscale::detection {
namespace {

const FleetShape kSmall{64, 8};

TEST(DetectionFleet, OneSeedOneFleetAndTheFaultDrawsFromItsOwnStream) {
  const auto seed = test_seed();
  const auto noise = default_noise();
  auto a = group_rows(kSmall, noise, seed, "gemm");
  const auto b = group_rows(kSmall, noise, seed, "gemm");
  ASSERT_EQ(a.rows.size(), 1u);
  ASSERT_EQ(a.rows[0].groups.size(), 64u);
  for (std::size_t g = 0; g < 64; ++g) EXPECT_EQ(a.rows[0].groups[g].value, b.rows[0].groups[g].value);
  // Another benchmark is another stream: the same seed gives STREAM its own figures.
  const auto s = group_rows(kSmall, noise, seed, "stream");
  EXPECT_NE(s.rows[0].groups[0].value, a.rows[0].groups[0].value);
  EXPECT_EQ(s.rows[0].unit, "GB/s");
  EXPECT_EQ(a.rows[0].unit, "TFLOP/s");
  // Replacing one group's repetitions and putting them back leaves the row as it was.
  const auto clean = a.reps[5];
  replace_group(a, kSmall, "gemm", 5, faulty_reps(clean, {FaultKind::slow_gpu, 0.5}, noise, seed));
  EXPECT_NEAR(*a.rows[0].groups[5].value, 0.5 * *b.rows[0].groups[5].value, 1e-9);
  EXPECT_EQ(a.rows[0].groups[4].value, b.rows[0].groups[4].value);
  replace_group(a, kSmall, "gemm", 5, clean);
  EXPECT_EQ(a.rows[0].groups[5].value, b.rows[0].groups[5].value);
  EXPECT_EQ(a.rows[0].groups[5].spread_up, b.rows[0].groups[5].spread_up);
}

TEST(DetectionFleet, AFaultOfSizeXLeavesOneMinusXOfTheThroughput) {
  const auto seed = test_seed();
  auto noise = default_noise();
  const std::vector<double> reps{10, 11, 12, 13, 14};
  const auto slow = faulty_reps(reps, {FaultKind::slow_gpu, 0.2}, noise, seed);
  for (std::size_t i = 0; i < reps.size(); ++i) EXPECT_DOUBLE_EQ(slow[i], reps[i] * 0.8);  // takes 1/0.8 as long
  // Flaky: each repetition slow with probability P, the same ones at every size (its own stream).
  noise.flaky_p = 0.5;
  std::vector<double> many(400, 1.0);
  const auto f10 = faulty_reps(many, {FaultKind::flaky, 0.1}, noise, seed);
  const auto f50 = faulty_reps(many, {FaultKind::flaky, 0.5}, noise, seed);
  int slow_count = 0;
  for (std::size_t i = 0; i < many.size(); ++i) {
    EXPECT_EQ(f10[i] < 1, f50[i] < 1);
    if (f50[i] < 1) {
      ++slow_count;
      EXPECT_DOUBLE_EQ(f50[i], 0.5);
      EXPECT_DOUBLE_EQ(f10[i], 0.9);
    }
  }
  EXPECT_GT(slow_count, 140);  // 200 expected; 6 standard deviations either side
  EXPECT_LT(slow_count, 260);
  noise.flaky_p = 1;
  EXPECT_EQ(faulty_reps(reps, {FaultKind::flaky, 0.2}, noise, seed), slow);
}

TEST(DetectionFleet, ASlowNicSlowsItsNodesPairsOnItsRailOnly) {
  const auto seed = test_seed();
  const auto noise = default_noise();
  const OutlierRule rule;
  const auto clean = rail_matrix(kSmall, noise, seed, 3, rule);
  const auto slow = rail_matrix(kSmall, noise, seed, 3, rule, 2, 0.5);
  ASSERT_EQ(clean.hosts.size(), 8u);
  EXPECT_EQ(clean.hosts[2], "node0002");
  EXPECT_EQ(clean.ranks[2], std::vector<int>{2 * 8 + 3});  // node 2's GPU of rail 3
  for (std::size_t i = 0; i < 8; ++i)
    for (std::size_t j = 0; j < 8; ++j) {
      if (i == j) {
        EXPECT_TRUE(std::isnan(slow.values[i][j]));
        continue;
      }
      if (i == 2 || j == 2)
        EXPECT_LT(slow.values[i][j], 0.6 * clean.values[i][j]);  // bounded by the slower NIC: about half
      else
        EXPECT_GE(slow.values[i][j], clean.values[i][j]);  // as clean, or better with the confirming pass
    }
  const auto named = matrix_outliers(slow, OutlierKind::node, rule);
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].hosts, std::vector<std::string>{"node0002"});
}

TEST(DetectionFleet, ASlowLinkIsOnePairOfOneNode) {
  const auto seed = test_seed();
  const auto noise = default_noise();
  const auto clean = gpu_pair_matrix(kSmall, noise, seed, 4);
  const auto slow = gpu_pair_matrix(kSmall, noise, seed, 4, std::pair{1, 6}, 0.5);
  for (std::size_t i = 0; i < 8; ++i)
    for (std::size_t j = i + 1; j < 8; ++j) {
      if (i == 1 && j == 6)
        EXPECT_NEAR(slow.values[i][j], 0.5 * clean.values[i][j], 1e-9);
      else
        EXPECT_EQ(slow.values[i][j], clean.values[i][j]);
    }
  EXPECT_EQ(clean.ranks[6], std::vector<int>{4 * 8 + 6});
  const auto named = matrix_outliers(slow, OutlierKind::gpu, OutlierRule{});
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].kind, OutlierKind::pair);
  EXPECT_EQ(named[0].ranks, (std::vector<int>{33, 38}));
}

TEST(DetectionFleet, EveryGpuHasASeriesOfEveryRunWithItsOwnBand) {
  const auto seed = test_seed();
  const auto noise = default_noise();
  const auto series = gpu_series(kSmall, noise, seed);
  ASSERT_EQ(series.size(), 64u);
  std::vector<std::string> ids;
  for (const auto& s : series) {
    ids.push_back(s.key.gpu);
    ASSERT_EQ(s.points.size(), static_cast<std::size_t>(noise.runs));
    EXPECT_EQ(s.unit, "TFLOP/s");
    for (const auto& p : s.points) {
      EXPECT_TRUE(p.band.known());
      EXPECT_GT(p.value, 0);
    }
    EXPECT_EQ(s.points[5].created_utc, run_time(6));
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_TRUE(std::binary_search(ids.begin(), ids.end(), gpu_id("node0007", 7)));
}

TEST(DetectionFleet, PlacesStayInsideTheFleet) {
  const auto seed = test_seed();
  for (std::uint64_t i = 0; i < 200; ++i) {
    const auto p = draw_places(kSmall, mix(seed, i));
    for (int g : {p.gemm_gpu, p.stream_gpu, p.flaky_gpu, p.throttle_gpu}) {
      EXPECT_GE(g, 0);
      EXPECT_LT(g, 64);
    }
    EXPECT_LT(p.nic_node, 8);
    EXPECT_LT(p.nic_rail, 8);
    EXPECT_LT(p.link_a, p.link_b);
    EXPECT_LT(p.link_b, 8);
  }
  EXPECT_EQ(link_id("node0001", 5, 2), "node0001:gpu2-gpu5");
  EXPECT_EQ(rail_id(host_name(12), 3), "node0012:rail3");
}

}  // namespace
}  // namespace gpuscale::detection
