// harness/row_groups: a tiled count's row is the median group's (a real group's figure, the lower
// middle for an even count), keeps every group, takes the worst status, and never shows a figure
// when any group is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "harness/rows/row_groups.h"

namespace gpuscale {
namespace {

// A group row of `ranks` ranks with random medians around `level`; value = their sum.
GroupRow group_of(std::mt19937_64& gen, int first_rank, int ranks, double level, const std::string& host) {
  std::uniform_real_distribution<double> u(0.9, 1.1);
  GroupRow g;
  g.group.hosts = {host};
  double sum = 0;
  for (int r = 0; r < ranks; ++r) {
    RankValue v;
    v.rank = first_rank + r;
    v.host = host;
    const double x = level * u(gen);
    v.value = x;
    v.stats.n = 3;
    v.stats.median = x;
    v.stats.min = x * 0.95;
    v.stats.max = x * 1.02;
    sum += x;
    g.row.ranks.push_back(v);
    g.group.ranks.push_back(first_rank + r);
  }
  g.row.benchmark = "stream.triad";
  g.row.gpu_count = ranks;
  g.row.aggregate = sum;
  g.row.scaling_efficiency = 0.5 + sum * 1e-6;  // marks which group the row was taken from
  return g;
}

TEST(RowGroups, TheRowIsTheMedianGroupAndKeepsEveryGroup) {
  std::mt19937_64 gen(11);
  for (int n : {1, 2, 3, 4, 7, 16}) {
    std::vector<GroupRow> groups;
    for (int i = 0; i < n; ++i) groups.push_back(group_of(gen, 2 * i, 2, 10 + i * 3.0, "h" + std::to_string(i)));
    std::shuffle(groups.begin(), groups.end(), gen);
    std::vector<double> values;
    for (const auto& g : groups) values.push_back(*g.row.aggregate);
    std::sort(values.begin(), values.end());
    const double want = values[static_cast<std::size_t>((n - 1) / 2)];
    const auto row = combine_group_rows(groups, {});
    ASSERT_TRUE(row.aggregate);
    EXPECT_DOUBLE_EQ(*row.aggregate, want) << n << " groups";
    EXPECT_DOUBLE_EQ(*row.scaling_efficiency, 0.5 + want * 1e-6);  // the same group's efficiency
    ASSERT_EQ(row.groups.size(), static_cast<std::size_t>(n));
    ASSERT_EQ(row.ranks.size(), static_cast<std::size_t>(2 * n));
    for (std::size_t i = 1; i < row.ranks.size(); ++i) EXPECT_LT(row.ranks[i - 1].rank, row.ranks[i].rank);
    for (std::size_t i = 0; i < groups.size(); ++i) {
      EXPECT_EQ(row.groups[i].ranks, groups[i].group.ranks);
      EXPECT_DOUBLE_EQ(*row.groups[i].value, *groups[i].row.aggregate);
      EXPECT_NEAR(row.groups[i].spread_down, 0.05, 1e-12);
      EXPECT_NEAR(row.groups[i].spread_up, 0.02, 1e-12);
    }
  }
}

TEST(RowGroups, OneWrongGroupMakesTheRowWrongWithoutAFigure) {
  std::mt19937_64 gen(12);
  std::vector<GroupRow> groups;
  for (int i = 0; i < 5; ++i) groups.push_back(group_of(gen, i, 1, 20, "h" + std::to_string(i)));
  groups[3].row.status = RowStatus::invalid;
  groups[3].row.errors = {"rank 3 (h3): verification failed"};
  const auto row = combine_group_rows(groups, {7});
  EXPECT_EQ(row.status, RowStatus::invalid);
  EXPECT_FALSE(row.aggregate);
  EXPECT_FALSE(row.scaling_efficiency);
  EXPECT_EQ(row.errors, std::vector<std::string>{"rank 3 (h3): verification failed"});
  EXPECT_FALSE(row.groups[3].value);  // the wrong group shows no figure either
  EXPECT_EQ(row.groups[3].status, RowStatus::invalid);
  EXPECT_TRUE(row.groups[2].value);
  EXPECT_EQ(row.idle_ranks, std::vector<int>{7});

  groups[1].row.status = RowStatus::failed;
  EXPECT_EQ(combine_group_rows(groups, {}).status, RowStatus::failed);  // failed is worse than invalid
}

TEST(RowGroups, SkippedOnlyWhenEveryGroupSkipped) {
  std::mt19937_64 gen(13);
  std::vector<GroupRow> groups;
  for (int i = 0; i < 3; ++i) groups.push_back(group_of(gen, i, 1, 5, "h"));
  for (auto& g : groups) g.row.status = RowStatus::skipped;
  EXPECT_EQ(combine_group_rows(groups, {}).status, RowStatus::skipped);
  groups[0].row.status = RowStatus::ok;
  EXPECT_EQ(combine_group_rows(groups, {}).status, RowStatus::ok);
  EXPECT_THROW(combine_group_rows({}, {}), std::invalid_argument);
}

TEST(RowGroups, TopologyLabels) {
  EXPECT_EQ(group_topology(1, 1), "single");
  EXPECT_EQ(group_topology(4, 1), "intra-node");
  EXPECT_EQ(group_topology(4, 2), "inter-node");
}

}  // namespace
}  // namespace gpuscale
