// harness/tiling: the disjoint groups at each GPU count (intra-node groups while k fits a node, runs
// of whole nodes beyond), leftovers named idle, mode `first` equal to today's participants(), and the
// rounds of each mode. Launch shapes: block and round-robin rank placement, equal and unequal nodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.h"
#include "harness/plan/tiling.h"

namespace gpuscale {
namespace {

struct Launch {
  std::vector<std::string> hosts;
  std::vector<int> local;
};

// `nodes` nodes of `per` ranks; round_robin places rank r on node r % nodes, else block placement.
Launch launch(int nodes, int per, bool round_robin) {
  Launch l;
  std::vector<int> next(static_cast<std::size_t>(nodes), 0);
  for (int r = 0; r < nodes * per; ++r) {
    const int node = round_robin ? r % nodes : r / per;
    l.hosts.push_back("node" + std::to_string(node));
    l.local.push_back(next[static_cast<std::size_t>(node)]++);
  }
  return l;
}

// Every rank is in exactly one group or idle; every group has k ranks.
void expect_partition(const Tiling& t, int n) {
  std::vector<int> seen(static_cast<std::size_t>(n), 0);
  for (const auto& g : t.groups) {
    EXPECT_EQ(static_cast<int>(g.ranks.size()), t.k);
    EXPECT_TRUE(std::is_sorted(g.ranks.begin(), g.ranks.end()));
    for (int r : g.ranks) ++seen[static_cast<std::size_t>(r)];
  }
  for (int r : t.idle) ++seen[static_cast<std::size_t>(r)];
  for (int r = 0; r < n; ++r) EXPECT_EQ(seen[static_cast<std::size_t>(r)], 1) << "rank " << r;
}

TEST(Tiling, EightNodesOfTwoGiveSixteenThenEightGroups) {
  const auto l = launch(8, 2, false);
  const auto one = tile(l.hosts, l.local, 1, TilingMode::concurrent);
  const auto two = tile(l.hosts, l.local, 2, TilingMode::concurrent);
  EXPECT_EQ(one.groups.size(), 16u);
  ASSERT_EQ(two.groups.size(), 8u);
  for (std::size_t g = 0; g < 8; ++g) {
    EXPECT_EQ(two.groups[g].ranks, (std::vector<int>{static_cast<int>(2 * g), static_cast<int>(2 * g + 1)}));
    EXPECT_EQ(two.groups[g].nodes, std::vector<int>{static_cast<int>(g)});
    EXPECT_EQ(group_hosts(two.groups[g], l.hosts), std::vector<std::string>{"node" + std::to_string(g)});
  }
  const auto four = tile(l.hosts, l.local, 4, TilingMode::concurrent);
  ASSERT_EQ(four.groups.size(), 4u);
  EXPECT_EQ(four.groups[1].nodes, (std::vector<int>{2, 3}));  // whole nodes
  EXPECT_EQ(tile(l.hosts, l.local, 16, TilingMode::concurrent).groups.size(), 1u);
  EXPECT_TRUE(two.idle.empty());
}

// Every launch shape: groups partition the ranks, stay inside a node while k fits one, take whole
// nodes when k is a multiple of the node size, and there are floor(N / k) of them for equal nodes
// whose size divides k or is divided by it.
TEST(Tiling, EveryShapeIsAPartitionWithTheRightGroups) {
  for (int nodes = 1; nodes <= 6; ++nodes)
    for (int per = 1; per <= 8; ++per)
      for (bool rr : {false, true}) {
        const auto l = launch(nodes, per, rr);
        const auto topo = make_topology(l.hosts, l.local);
        const int n = nodes * per;
        for (int k : gpu_counts(n)) {
          SCOPED_TRACE(testing::Message() << nodes << " nodes x " << per << ", k " << k << (rr ? " rr" : ""));
          const auto t = tile(topo, k, TilingMode::concurrent);
          expect_partition(t, n);
          for (const auto& g : t.groups) {
            if (k <= per) {
              EXPECT_EQ(g.nodes.size(), 1u) << "inside one node";
            }
            if (k > per && k % per == 0) {
              EXPECT_EQ(static_cast<int>(g.nodes.size()), k / per) << "whole nodes";
            }
          }
          if (per % k == 0 || k % per == 0) {
            EXPECT_EQ(static_cast<int>(t.groups.size()), n / k);
          }
          if (k <= per) {
            EXPECT_EQ(static_cast<int>(t.groups.size()), nodes * (per / k));
          }
          EXPECT_EQ(t.groups[0].ranks, participants(topo, k));  // equal nodes: group 0 is today's group
        }
      }
}

TEST(Tiling, LeftoversAreIdleAndNamed) {
  // 2 nodes of 3: at k = 2 each node keeps one rank idle (a group of the two would cross nodes).
  const auto l = launch(2, 3, false);
  const auto two = tile(l.hosts, l.local, 2, TilingMode::concurrent);
  ASSERT_EQ(two.groups.size(), 2u);
  EXPECT_EQ(two.groups[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(two.groups[1].ranks, (std::vector<int>{3, 4}));
  EXPECT_EQ(two.idle, (std::vector<int>{2, 5}));
  // k = 4 spans nodes: runs of the packed order, the last 2 ranks idle.
  const auto four = tile(l.hosts, l.local, 4, TilingMode::concurrent);
  ASSERT_EQ(four.groups.size(), 1u);
  EXPECT_EQ(four.groups[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(four.groups[0].nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(four.idle, (std::vector<int>{4, 5}));
  EXPECT_EQ(group_of_rank(four, 3), 0);
  EXPECT_EQ(group_of_rank(four, 5), -1);
}

TEST(Tiling, UnequalNodesKeepIntraNodeGroupsInsideOneNode) {
  // Node sizes 4, 2, 4 (block): at k = 4 the small node idles rather than a group crossing nodes.
  std::vector<std::string> hosts;
  std::vector<int> local;
  for (auto [name, count] : {std::pair{"a", 4}, std::pair{"b", 2}, std::pair{"c", 4}})
    for (int i = 0; i < count; ++i) {
      hosts.push_back(name);
      local.push_back(i);
    }
  const auto t = tile(hosts, local, 4, TilingMode::concurrent);
  ASSERT_EQ(t.groups.size(), 2u);
  EXPECT_EQ(t.groups[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(t.groups[1].ranks, (std::vector<int>{6, 7, 8, 9}));
  EXPECT_EQ(t.idle, (std::vector<int>{4, 5}));
  expect_partition(t, 10);
}

TEST(Tiling, LocalRankOrderNotWorldOrderCutsTheNode) {
  // One node whose world ranks run against local rank order: groups follow local ranks.
  const std::vector<std::string> hosts(4, "n");
  const std::vector<int> local = {3, 2, 1, 0};
  const auto t = tile(hosts, local, 2, TilingMode::concurrent);
  ASSERT_EQ(t.groups.size(), 2u);
  EXPECT_EQ(t.groups[0].ranks, (std::vector<int>{2, 3}));  // local ranks 0 and 1
  EXPECT_EQ(t.groups[1].ranks, (std::vector<int>{0, 1}));
}

TEST(Tiling, FirstIsTodaysPlanForRandomPlacements) {
  std::mt19937 gen(1234);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = std::uniform_int_distribution<int>(1, 24)(gen);
    const int nodes = std::uniform_int_distribution<int>(1, 5)(gen);
    std::vector<std::string> hosts;
    std::vector<int> local, next(static_cast<std::size_t>(nodes), 0);
    for (int r = 0; r < n; ++r) {
      const int node = std::uniform_int_distribution<int>(0, nodes - 1)(gen);
      hosts.push_back("h" + std::to_string(node));
      local.push_back(next[static_cast<std::size_t>(node)]++);
    }
    const auto topo = make_topology(hosts, local);
    for (int k : gpu_counts(n)) {
      const auto first = tile(topo, k, TilingMode::first);
      ASSERT_EQ(first.groups.size(), 1u);
      EXPECT_EQ(first.groups[0].ranks, participants(topo, k));
      expect_partition(first, n);
      expect_partition(tile(topo, k, TilingMode::concurrent), n);
      for (const auto& g : tile(topo, k, TilingMode::sequential).groups)
        if (k <= *std::max_element(next.begin(), next.end())) {
            EXPECT_EQ(g.nodes.size(), 1u);
          }
    }
  }
}

TEST(Tiling, RoundsOfEachMode) {
  const auto l = launch(4, 2, true);
  const auto c = tile(l.hosts, l.local, 2, TilingMode::concurrent);
  EXPECT_EQ(tiling_rounds(c), (std::vector<std::vector<int>>{{0, 1, 2, 3}}));
  const auto s = tile(l.hosts, l.local, 2, TilingMode::sequential);
  EXPECT_EQ(s.groups.size(), c.groups.size());
  for (std::size_t g = 0; g < s.groups.size(); ++g) EXPECT_EQ(s.groups[g].ranks, c.groups[g].ranks);
  EXPECT_EQ(tiling_rounds(s), (std::vector<std::vector<int>>{{0}, {1}, {2}, {3}}));
  const auto f = tile(l.hosts, l.local, 2, TilingMode::first);
  EXPECT_EQ(tiling_rounds(f), (std::vector<std::vector<int>>{{0}}));
  EXPECT_EQ(f.idle.size(), 6u);
}

TEST(Tiling, ModesParseAndBadCountsThrow) {
  for (auto m : {TilingMode::concurrent, TilingMode::sequential, TilingMode::first})
    EXPECT_EQ(parse_tiling_mode(tiling_mode_name(m)), m);
  try {
    parse_tiling_mode("parallel");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("--tiling 'parallel'"), std::string::npos);
  }
  const auto l = launch(2, 2, false);
  EXPECT_THROW(tile(l.hosts, l.local, 0, TilingMode::concurrent), std::invalid_argument);
  EXPECT_THROW(tile(l.hosts, l.local, 5, TilingMode::concurrent), std::invalid_argument);
}

}  // namespace
}  // namespace gpuscale
