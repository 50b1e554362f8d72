// harness/row_builder: per-rank statistics, status, aggregate, scaling efficiency and fraction of peak.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "harness/rows/row_builder.h"

namespace gpuscale {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The rank's measurement as rank 0 receives it: reduced on the rank (harness/rows/measurement_json.h).
RankEntry rank_entry(int rank, std::vector<double> reps) {
  RankEntry e;
  e.rank = rank;
  e.host = rank < 4 ? "nodeA" : "nodeB";
  e.device_index = rank % 4;
  RankMeasurement m;
  m.reps = std::move(reps);
  m.metrics = {{"bytes_per_pass", 1.0e9 + rank}};
  e.m = summarize(m, rank == 0);
  return e;
}

// `reps_out`: every rank's repetitions, for the checks.
RowInputs independent_inputs(int k, std::mt19937_64& rng, std::vector<std::vector<double>>* reps_out = nullptr) {
  RowInputs in;
  in.benchmark = "stream.triad";
  in.scope = Scope::independent;
  in.unit = "GB/s";
  in.params = {{"dtype", "fp64"}, {"elements", 1000}};
  in.gpu_count = k;
  in.nodes = k > 4 ? 2 : 1;
  in.topology = k == 1 ? "single" : k > 4 ? "inter-node" : "intra-node";
  std::uniform_real_distribution<double> bw(100.0, 200.0);
  for (int r = 0; r < k; ++r) {
    std::vector<double> reps(3 + rng() % 6);
    for (auto& x : reps) x = bw(rng);
    if (reps_out) reps_out->push_back(reps);
    in.ranks.push_back(rank_entry(r, reps));
  }
  return in;
}

TEST(RowBuilder, IndependentAggregateEfficiencyAndPeak) {
  std::mt19937_64 rng(71);
  for (int trial = 0; trial < 50; ++trial) {
    const int k = 2 + static_cast<int>(rng() % 7);
    std::vector<std::vector<double>> reps;
    auto in = independent_inputs(k, rng, &reps);
    const double single = 150.0 + static_cast<double>(rng() % 50), peak = 400.0;
    in.single_rank_value = single;
    in.peak = {peak, "datasheet"};
    const auto row = build_row(in);
    SCOPED_TRACE(testing::Message() << "k=" << k);

    double sum = 0;
    ASSERT_EQ(row.ranks.size(), static_cast<std::size_t>(k));
    for (int r = 0; r < k; ++r) {
      const auto& v = row.ranks[static_cast<std::size_t>(r)];
      const double med = median(reps[static_cast<std::size_t>(r)]);
      ASSERT_TRUE(v.value.has_value());
      EXPECT_DOUBLE_EQ(*v.value, med);
      EXPECT_EQ(v.stats.n, reps[static_cast<std::size_t>(r)].size());
      EXPECT_EQ(v.rank, r);
      EXPECT_EQ(v.device_index, r % 4);
      EXPECT_TRUE(v.valid);
      EXPECT_EQ(v.metrics, in.ranks[static_cast<std::size_t>(r)].m.metrics);
      sum += med;
    }
    EXPECT_EQ(row.status, RowStatus::ok);
    ASSERT_TRUE(row.aggregate.has_value());
    EXPECT_NEAR(*row.aggregate, sum, 1e-9 * sum);
    ASSERT_TRUE(row.scaling_efficiency.has_value());
    EXPECT_NEAR(*row.scaling_efficiency, sum / (k * single), 1e-12);
    ASSERT_TRUE(row.fraction_of_peak.has_value());
    EXPECT_NEAR(*row.fraction_of_peak, sum / (k * peak), 1e-12);
    EXPECT_EQ(row.expected_peak, peak);
    EXPECT_EQ(row.peak_source, "datasheet");
    EXPECT_EQ(row.efficiency_basis, "aggregate / (gpu_count x value at 1 GPU)");
    EXPECT_EQ(row.benchmark, "stream.triad");
    EXPECT_EQ(row.scope, "independent");
    EXPECT_EQ(row.unit, "GB/s");
    EXPECT_EQ(row.gpu_count, k);
    EXPECT_EQ(row.nodes, in.nodes);
    EXPECT_EQ(row.topology, in.topology);
    EXPECT_EQ(row.params, in.params);
    EXPECT_TRUE(row.errors.empty());
  }
}

TEST(RowBuilder, OneGpuIsItsOwnReference) {
  std::mt19937_64 rng(73);
  auto in = independent_inputs(1, rng);
  in.single_rank_value = 1.0;  // ignored at 1 GPU: the point itself is the reference
  const auto row = build_row(in);
  ASSERT_TRUE(row.scaling_efficiency.has_value());
  EXPECT_EQ(*row.scaling_efficiency, 1.0);
  EXPECT_FALSE(row.fraction_of_peak.has_value());  // no peak given
  EXPECT_FALSE(row.expected_peak.has_value());
}

TEST(RowBuilder, NoEfficiencyWithoutAValidSingleValue) {
  std::mt19937_64 rng(79);
  for (std::optional<double> single :
       {std::optional<double>{}, std::optional<double>{0.0}, std::optional<double>{-3.0}}) {
    auto in = independent_inputs(4, rng);
    in.single_rank_value = single;
    const auto row = build_row(in);
    EXPECT_EQ(row.status, RowStatus::ok);
    EXPECT_TRUE(row.aggregate.has_value());
    EXPECT_FALSE(row.scaling_efficiency.has_value());
    EXPECT_EQ(row.efficiency_basis.rfind("none", 0), 0u) << row.efficiency_basis;
  }
}

TEST(RowBuilder, UnmeasuredRankLeavesNoAggregate) {
  std::mt19937_64 rng(83);
  auto in = independent_inputs(3, rng);
  in.ranks[1].m.stats.reset();
  in.single_rank_value = 100.0;
  const auto row = build_row(in);
  EXPECT_FALSE(row.ranks[1].value.has_value());
  EXPECT_FALSE(row.aggregate.has_value());  // a partial sum is not the aggregate
  EXPECT_FALSE(row.scaling_efficiency.has_value());
}

TEST(RowBuilder, IndependentEfficiencyFunction) {
  EXPECT_EQ(independent_efficiency(10.0, 4, 2.5), 1.0);
  EXPECT_DOUBLE_EQ(*independent_efficiency(6.0, 4, 2.0), 0.75);
  EXPECT_FALSE(independent_efficiency(std::nullopt, 4, 2.0).has_value());
  EXPECT_FALSE(independent_efficiency(6.0, 4, std::nullopt).has_value());
  EXPECT_FALSE(independent_efficiency(6.0, 4, 0.0).has_value());
  EXPECT_FALSE(independent_efficiency(6.0, 0, 2.0).has_value());
}

RowInputs collective_inputs(int k, std::optional<double> busbw, ExpectedPeak peak, const std::string& topology) {
  RowInputs in;
  in.benchmark = "all_reduce";
  in.scope = Scope::collective;
  in.unit = "GB/s";
  in.params = {{"dtype", "fp32"}, {"size_bytes", 1 << 20}, {"op", "sum"}, {"placement", "out-of-place"}};
  in.gpu_count = k;
  in.topology = topology;
  in.peak = std::move(peak);
  for (int r = 0; r < k; ++r) {
    auto e = rank_entry(r, {10.0 + r, 11.0 + r, 12.0 + r});
    e.m.aggregate = r == 0 ? busbw : std::optional<double>(999.0);  // rank 0's figure is the group's
    e.m.row_metrics = {{"busbw", busbw ? *busbw : 0.0}, {"transport", "mpi"}};
    in.ranks.push_back(e);
  }
  return in;
}

TEST(RowBuilder, CollectiveUsesTheGroupFigureAndTheLinkPeak) {
  const auto row = build_row(collective_inputs(4, 42.0, {50.0, "--link-peak"}, "intra-node"));
  EXPECT_EQ(row.status, RowStatus::ok);
  EXPECT_EQ(row.scope, "collective");
  ASSERT_TRUE(row.aggregate.has_value());
  EXPECT_EQ(*row.aggregate, 42.0);  // not the sum of the ranks' values
  ASSERT_TRUE(row.scaling_efficiency.has_value());
  EXPECT_DOUBLE_EQ(*row.scaling_efficiency, 42.0 / 50.0);
  EXPECT_DOUBLE_EQ(*row.fraction_of_peak, 42.0 / 50.0);
  EXPECT_NE(row.efficiency_basis.find("intra-node"), std::string::npos) << row.efficiency_basis;
  EXPECT_EQ(row.metrics["transport"], "mpi");
  EXPECT_EQ(row.metrics["busbw"], 42.0);
  EXPECT_EQ(*row.ranks[2].value, 13.0);  // each rank's own median stays per rank
}

TEST(RowBuilder, CollectiveWithoutPeakHasNoEfficiency) {
  const auto row = build_row(collective_inputs(1, 0.0, {std::nullopt, "one rank: no link is crossed"}, "single"));
  EXPECT_EQ(row.status, RowStatus::ok);
  EXPECT_TRUE(row.aggregate.has_value());
  EXPECT_FALSE(row.scaling_efficiency.has_value());
  EXPECT_FALSE(row.fraction_of_peak.has_value());
  EXPECT_EQ(row.efficiency_basis, "none: one rank: no link is crossed");
  EXPECT_EQ(row.peak_source, "one rank: no link is crossed");
}

TEST(RowBuilder, AnyFailedRankFailsTheRow) {
  std::mt19937_64 rng(89);
  auto in = independent_inputs(4, rng);
  in.single_rank_value = 100.0;
  in.peak = {300.0, "datasheet"};
  in.ranks[2].m.failed = true;
  in.ranks[2].m.stats.reset();
  in.ranks[2].m.message = "cudaMalloc failed";
  in.ranks[3].m.valid = false;  // invalid elsewhere: failed still wins
  in.ranks[3].m.message = "1 of 10 elements wrong";
  const auto row = build_row(in);
  EXPECT_EQ(row.status, RowStatus::failed);
  EXPECT_FALSE(row.aggregate.has_value());
  EXPECT_FALSE(row.scaling_efficiency.has_value());
  EXPECT_FALSE(row.fraction_of_peak.has_value());
  EXPECT_EQ(row.efficiency_basis, "none: the measurement is failed");
  EXPECT_FALSE(row.ranks[2].valid);
  EXPECT_FALSE(row.ranks[3].valid);
  EXPECT_TRUE(row.ranks[0].valid);
  EXPECT_EQ(row.ranks[2].error, "cudaMalloc failed");
  EXPECT_NE(std::find(row.errors.begin(), row.errors.end(), "rank 2 (nodeA): cudaMalloc failed"), row.errors.end());
  EXPECT_EQ(row.errors.size(), 2u);
}

TEST(RowBuilder, AllSkippedIsSkippedWithOneMessage) {
  std::mt19937_64 rng(97);
  auto in = independent_inputs(3, rng);
  for (auto& e : in.ranks) {
    e.m.stats.reset();
    e.m.skipped = true;
    e.m.message = "MPI has no reduction for bf16";
  }
  const auto row = build_row(in);
  EXPECT_EQ(row.status, RowStatus::skipped);
  EXPECT_FALSE(row.aggregate.has_value());
  EXPECT_EQ(row.errors, (std::vector<std::string>{"MPI has no reduction for bf16"}));
}

TEST(RowBuilder, AnInvalidRankIsNeverReportedAsAThroughput) {
  std::mt19937_64 rng(101);
  for (int k : {1, 2, 5}) {
    auto in = independent_inputs(k, rng);
    in.single_rank_value = 150.0;
    in.peak = {300.0, "datasheet"};
    in.ranks.back().m.valid = false;
    in.ranks.back().m.message = "3 of 1000 elements wrong";
    const auto row = build_row(in);
    EXPECT_EQ(row.status, RowStatus::invalid);
    EXPECT_FALSE(row.aggregate.has_value());
    EXPECT_FALSE(row.scaling_efficiency.has_value());
    EXPECT_FALSE(row.fraction_of_peak.has_value());
    EXPECT_FALSE(row.ranks.back().valid);
    EXPECT_EQ(row.errors.size(), 1u);
    EXPECT_NE(row.errors[0].find("3 of 1000 elements wrong"), std::string::npos);
  }
  auto c = collective_inputs(4, 42.0, {50.0, "--link-peak"}, "intra-node");
  c.ranks[1].m.valid = false;
  const auto row = build_row(c);
  EXPECT_EQ(row.status, RowStatus::invalid);
  EXPECT_FALSE(row.aggregate.has_value());  // even though rank 0 reported a busbw
  EXPECT_FALSE(row.scaling_efficiency.has_value());
  EXPECT_FALSE(row.fraction_of_peak.has_value());
}

}  // namespace
}  // namespace gpuscale

namespace gpuscale {
namespace {

// dp-step: a collective whose efficiency is weak scaling, throughput(k) / (k x throughput(1)).
RowInputs dp_inputs(int k, double group_rate, std::optional<double> single) {
  RowInputs in;
  in.benchmark = "dp-step";
  in.scope = Scope::collective;
  in.efficiency = Efficiency::weak_scaling;
  in.unit = "samples/s";
  in.params = {{"dtype", "bf16"}, {"width", 8192}};
  in.gpu_count = k;
  in.topology = k == 1 ? "single" : "intra-node";
  in.single_rank_value = single;
  in.peak = {1000.0, "dense bf16 peak / FLOP per sample"};
  for (int r = 0; r < k; ++r) {
    RankEntry e;
    e.rank = r;
    e.host = "nodeA";
    e.m.stats = compute_stats({group_rate / k * 0.99, group_rate / k, group_rate / k * 1.01});
    e.m.aggregate = group_rate;
    in.ranks.push_back(e);
  }
  return in;
}

TEST(RowBuilder, WeakScalingEfficiencyAgainstOneGpu) {
  const auto one = build_row(dp_inputs(1, 800.0, std::nullopt));
  ASSERT_EQ(one.status, RowStatus::ok);
  EXPECT_EQ(one.aggregate, 800.0) << "the group's figure, not a sum of rank medians";
  EXPECT_EQ(one.scaling_efficiency, 1.0);
  EXPECT_NEAR(*one.fraction_of_peak, 0.8, 1e-12);
  const auto four = build_row(dp_inputs(4, 2880.0, 800.0));
  EXPECT_NEAR(*four.scaling_efficiency, 2880.0 / (4 * 800.0), 1e-12);
  EXPECT_NEAR(*four.fraction_of_peak, 2880.0 / (4 * 1000.0), 1e-12) << "per device peak x k";
  EXPECT_NE(four.efficiency_basis.find("weak scaling"), std::string::npos);
  const auto orphan = build_row(dp_inputs(2, 1500.0, std::nullopt));
  EXPECT_FALSE(orphan.scaling_efficiency) << "no 1-GPU row, no efficiency";
  EXPECT_NE(orphan.efficiency_basis.find("no valid 1-GPU value"), std::string::npos);
  auto bad = dp_inputs(2, 1500.0, 800.0);
  bad.ranks[1].m.valid = false;
  const auto invalid = build_row(bad);
  EXPECT_EQ(invalid.status, RowStatus::invalid);
  EXPECT_FALSE(invalid.aggregate);
  EXPECT_FALSE(invalid.scaling_efficiency);
  // Collectives keep the link-peak rule when no rule is given.
  auto coll = dp_inputs(2, 100.0, 50.0);
  coll.efficiency.reset();
  coll.peak = {200.0, "NVLink"};
  EXPECT_NEAR(*build_row(coll).scaling_efficiency, 0.5, 1e-12);
}

}  // namespace
}  // namespace gpuscale
