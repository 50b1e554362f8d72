// harness/plan: topology from (host, local rank) per world rank, the GPU counts, and which ranks
// measure at each count, for every launch shape of 1..9 ranks on 1..3 nodes, block and round-robin.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "harness/plan/plan.h"

namespace gpuscale {
namespace {

// Host names deliberately not in alphabetical order: nodes are numbered by first appearance.
const std::string kHosts[] = {"nid-c", "nid-a", "nid-b"};

struct Launch {
  std::vector<std::string> hosts;
  std::vector<int> local;
  std::vector<std::vector<int>> ranks_of_node;  // world ranks of each node (by first appearance), local order
};

// Ranks 0..s0-1 on node A, the next s1 on node B, ...
Launch block(const std::vector<int>& sizes) {
  Launch l;
  l.ranks_of_node.resize(sizes.size());
  int r = 0;
  for (std::size_t node = 0; node < sizes.size(); ++node)
    for (int i = 0; i < sizes[node]; ++i, ++r) {
      l.hosts.push_back(kHosts[node]);
      l.local.push_back(i);
      l.ranks_of_node[node].push_back(r);
    }
  return l;
}

// Rank r on node r % nodes.
Launch round_robin(int n, int nodes) {
  Launch l;
  l.ranks_of_node.resize(static_cast<std::size_t>(nodes));
  for (int r = 0; r < n; ++r) {
    l.hosts.push_back(kHosts[r % nodes]);
    l.local.push_back(r / nodes);
    l.ranks_of_node[static_cast<std::size_t>(r % nodes)].push_back(r);
  }
  return l;
}

void check_launch(const Launch& l) {
  const int n = static_cast<int>(l.hosts.size());
  const auto t = make_topology(l.hosts, l.local);
  ASSERT_EQ(t.nodes, static_cast<int>(l.ranks_of_node.size()));
  ASSERT_EQ(t.node_of_rank.size(), l.hosts.size());
  for (std::size_t node = 0; node < l.ranks_of_node.size(); ++node)
    for (int r : l.ranks_of_node[node]) EXPECT_EQ(t.node_of_rank[static_cast<std::size_t>(r)], static_cast<int>(node));

  // Packed order: node 0 completely, then node 1, ..., each in local-rank order.
  std::vector<int> packed;
  for (const auto& ranks : l.ranks_of_node) packed.insert(packed.end(), ranks.begin(), ranks.end());
  EXPECT_EQ(t.packed_order, packed);

  for (int k = 0; k <= n + 1; ++k) {
    SCOPED_TRACE(testing::Message() << "k=" << k);
    const auto p = participants(t, k);
    const int taken = std::min(k, n);
    ASSERT_EQ(static_cast<int>(p.size()), taken);
    EXPECT_EQ(static_cast<int>(std::set<int>(p.begin(), p.end()).size()), taken);  // distinct
    EXPECT_TRUE(std::is_sorted(p.begin(), p.end()));
    std::vector<int> want(packed.begin(), packed.begin() + taken);
    std::sort(want.begin(), want.end());
    EXPECT_EQ(p, want);
    // A node is used only once every earlier node is full.
    int spanned = 0, filled = 0;
    for (const auto& ranks : l.ranks_of_node) {
      if (filled >= taken) break;
      ++spanned;
      filled += static_cast<int>(ranks.size());
    }
    EXPECT_EQ(nodes_spanned(t, k), spanned);
    EXPECT_EQ(topology_label(t, k), k <= 1 ? "single" : spanned > 1 ? "inter-node" : "intra-node");
  }
}

TEST(Plan, EveryLaunchShapeBlockMapping) {
  for (int n = 1; n <= 9; ++n)
    for (int nodes = 1; nodes <= std::min(3, n); ++nodes) {
      std::vector<int> sizes(static_cast<std::size_t>(nodes), n / nodes);
      for (int i = 0; i < n % nodes; ++i) ++sizes[static_cast<std::size_t>(i)];  // Slurm's block: first nodes get more
      SCOPED_TRACE(testing::Message() << n << " ranks, block over " << nodes << " nodes");
      check_launch(block(sizes));
    }
}

TEST(Plan, UnevenBlockMappings) {
  std::mt19937 rng(67);
  for (int trial = 0; trial < 100; ++trial) {
    const int nodes = 1 + static_cast<int>(rng() % 3);
    std::vector<int> sizes;
    for (int i = 0; i < nodes; ++i) sizes.push_back(1 + static_cast<int>(rng() % 4));
    SCOPED_TRACE(testing::Message() << "sizes " << testing::PrintToString(sizes));
    check_launch(block(sizes));
  }
}

TEST(Plan, EveryLaunchShapeRoundRobinMapping) {
  for (int n = 1; n <= 9; ++n)
    for (int nodes = 1; nodes <= std::min(3, n); ++nodes) {
      SCOPED_TRACE(testing::Message() << n << " ranks, round-robin over " << nodes << " nodes");
      check_launch(round_robin(n, nodes));
    }
}

TEST(Plan, RoundRobinStillFillsOneNodeFirst) {
  const auto l = round_robin(8, 2);  // even ranks on node 0, odd ranks on node 1
  const auto t = make_topology(l.hosts, l.local);
  EXPECT_EQ(participants(t, 2), (std::vector<int>{0, 2}));
  EXPECT_EQ(participants(t, 4), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(nodes_spanned(t, 4), 1);
  EXPECT_EQ(topology_label(t, 4), "intra-node");
  EXPECT_EQ(participants(t, 5), (std::vector<int>{0, 1, 2, 4, 6}));
  EXPECT_EQ(topology_label(t, 5), "inter-node");
  EXPECT_EQ(participants(t, 8), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(topology_label(t, 1), "single");
}

TEST(Plan, LocalRankDecidesTheOrderWithinANode) {
  // One node whose local ranks run opposite to the world ranks.
  const auto t = make_topology({"h", "h", "h", "h"}, {3, 2, 1, 0});
  EXPECT_EQ(t.packed_order, (std::vector<int>{3, 2, 1, 0}));
  EXPECT_EQ(participants(t, 2), (std::vector<int>{2, 3}));
}

TEST(Plan, GpuCounts) {
  for (int n = 1; n <= 17; ++n) {
    std::vector<int> want;
    for (int k = 1; k <= n; k *= 2) want.push_back(k);
    if (want.back() != n) want.push_back(n);
    const auto got = gpu_counts(n);
    EXPECT_EQ(got, want) << "n=" << n;
    EXPECT_EQ(got.front(), 1);
    EXPECT_EQ(got.back(), n);
    for (std::size_t i = 1; i < got.size(); ++i) EXPECT_LT(got[i - 1], got[i]) << "n=" << n;
  }
  EXPECT_EQ(gpu_counts(1), (std::vector<int>{1}));
  EXPECT_EQ(gpu_counts(6), (std::vector<int>{1, 2, 4, 6}));
  EXPECT_EQ(gpu_counts(8), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(gpu_counts(17), (std::vector<int>{1, 2, 4, 8, 16, 17}));
  const auto big = gpu_counts(INT_MAX);  // no overflow past 2^30
  EXPECT_EQ(big.size(), 32u);
  EXPECT_EQ(big[30], 1 << 30);
  EXPECT_EQ(big.back(), INT_MAX);
}


// Communicators go after the last collective point still to measure, not after each point's use: the
// plan is points-major, so every collective point needs every GPU count's communicator again.
TEST(Plan, CommunicatorsGoAfterTheLastCollectivePointToMeasure) {
  using V = std::vector<bool>;
  const V none(4, false);
  EXPECT_EQ(last_communicator_point({false, false, false}, {false, false, false}), std::nullopt);
  EXPECT_EQ(last_communicator_point({}, {}), std::nullopt);
  // stream, all_reduce, gemm, all_gather, copy: freed after all_gather (index 3), not after all_reduce.
  EXPECT_EQ(last_communicator_point({false, true, false, true, false}, V(5, false)), std::optional<std::size_t>(3));
  EXPECT_EQ(last_communicator_point({true, true, true, true}, none), std::optional<std::size_t>(3));
  EXPECT_EQ(last_communicator_point({true, false, false, false}, none), std::optional<std::size_t>(0));
  // A resumed file holds the last collective point: the one before it is the last to need them.
  EXPECT_EQ(last_communicator_point({false, true, false, true}, {false, false, false, true}),
            std::optional<std::size_t>(1));
  EXPECT_EQ(last_communicator_point({true, true}, {true, true}), std::nullopt);
  // Random plans: the answer is the largest index both collective and still to measure.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = rng() % 12;
    V coll(n), kept(n);
    std::optional<std::size_t> want;
    for (std::size_t i = 0; i < n; ++i) {
      coll[i] = rng() % 2;
      kept[i] = rng() % 3 == 0;
      if (coll[i] && !kept[i]) want = i;
    }
    EXPECT_EQ(last_communicator_point(coll, kept), want);
  }
}

// Issue 46, finding 5: each GPU count's communicator lives from its first row that needs one to its
// last, so a count that no later point measures on a communicator frees its device memory at once.
TEST(Plan, EachCountsCommunicatorGoesAfterItsLastRow) {
  using M = std::vector<std::vector<bool>>;
  // all_reduce at counts 1, 2, 4; then a fleet point at 4 only; then stream (no communicator).
  const M needs = {{true, true, true}, {false, false, true}, {false, false, false}};
  const auto last = last_communicator_rows(needs, 3);
  ASSERT_EQ(last.size(), 3u);
  EXPECT_EQ(last[0], std::optional<std::size_t>(0));
  EXPECT_EQ(last[1], std::optional<std::size_t>(0));
  EXPECT_EQ(last[2], std::optional<std::size_t>(1));
  EXPECT_EQ(count_communicators_alive(needs, 3), (std::vector<int>{3, 1, 0}));
  EXPECT_EQ(last_communicator_rows({}, 2), (std::vector<std::optional<std::size_t>>(2)));
  EXPECT_EQ(count_communicators_alive({{}, {true}}, 2), (std::vector<int>{0, 1}));  // short rows are false
  // Random plans against a replay of the run: make a count's communicator at its first row that needs
  // one, free it after the last; no row that needs one finds it missing, none outlives its last row, and
  // the most alive at any point is what count_communicators_alive said for that point.
  std::mt19937 rng(46);
  for (int trial = 0; trial < 500; ++trial) {
    const std::size_t points = rng() % 10, counts = 1 + rng() % 5;
    M m(points, std::vector<bool>(counts));
    for (auto& row : m)
      for (std::size_t c = 0; c < counts; ++c) row[c] = rng() % 3 == 0;
    const auto last_rows = last_communicator_rows(m, counts);
    const auto alive = count_communicators_alive(m, counts);
    ASSERT_EQ(alive.size(), points);
    std::vector<bool> held(counts, false), ever(counts, false);
    for (std::size_t p = 0; p < points; ++p) {
      int most = 0;
      for (std::size_t c = 0; c < counts; ++c) {
        if (m[p][c]) {
          EXPECT_TRUE(held[c] || !ever[c]) << "count " << c << " needed its communicator again at point " << p << " after it was freed";
          held[c] = ever[c] = true;
        }
        most = std::max(most, static_cast<int>(std::count(held.begin(), held.end(), true)));
        if (last_rows[c] == p) {
          EXPECT_TRUE(held[c]);
          held[c] = false;
        }
      }
      EXPECT_LE(most, alive[p]) << "point " << p;
      // alive[p] counts each count whose communicator exists at some moment of point p, and no other.
      int spans = 0;
      for (std::size_t c = 0; c < counts; ++c) {
        bool before = false, after = false;
        for (std::size_t q = 0; q <= p; ++q) before = before || m[q][c];
        for (std::size_t q = p; q < points; ++q) after = after || m[q][c];
        spans += before && after;
      }
      EXPECT_EQ(alive[p], spans) << "point " << p;
    }
    for (std::size_t c = 0; c < counts; ++c) EXPECT_FALSE(held[c]) << "count " << c << " never freed";
  }
}

}  // namespace
}  // namespace gpuscale
