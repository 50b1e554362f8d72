// harness/pair_schedule: the round-robin node-pair tournament (every pair exactly once, pairs
// disjoint within a round, the bye of odd counts), exhaustively for 1..64 nodes and at 512, 1000 and
// 4096; seeded sampled rounds; the intra-node GPU-pair order; the rail groups inside a node pair (even
// and uneven nodes, every rank in at most one group of a round).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

#include "harness/benchmarks/fleet/pair_schedule.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

// Every pair at most once over `rounds`, disjoint within each round, byes valid; returns the pair count.
std::size_t check_rounds(const std::vector<PairRound>& rounds, int n) {
  const auto nn = static_cast<std::size_t>(n);
  std::vector<char> seen(nn * nn, 0);
  std::vector<int> round_of(nn, -1);
  std::size_t pairs = 0;
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    auto busy = [&](int node) {
      EXPECT_NE(round_of[static_cast<std::size_t>(node)], static_cast<int>(r)) << "node " << node << " twice in round " << r;
      round_of[static_cast<std::size_t>(node)] = static_cast<int>(r);
    };
    for (const auto& p : rounds[r].pairs) {
      EXPECT_TRUE(0 <= p.a && p.a < p.b && p.b < n) << p.a << "-" << p.b;
      char& cell = seen[static_cast<std::size_t>(p.a) * nn + static_cast<std::size_t>(p.b)];
      EXPECT_EQ(cell, 0) << "pair " << p.a << "-" << p.b << " twice";
      cell = 1;
      busy(p.a);
      busy(p.b);
      ++pairs;
    }
    if (rounds[r].bye >= 0) busy(rounds[r].bye);
    // Every node plays or has the bye: a round leaves nobody out.
    std::size_t present = 2 * rounds[r].pairs.size() + (rounds[r].bye >= 0 ? 1 : 0);
    EXPECT_EQ(present, nn);
  }
  return pairs;
}

void check_tournament(int n) {
  SCOPED_TRACE(testing::Message() << n << " nodes");
  const auto rounds = round_robin(n);
  const auto nn = static_cast<std::size_t>(n);
  if (n < 2) {
    EXPECT_TRUE(rounds.empty());
    return;
  }
  EXPECT_EQ(rounds.size(), n % 2 == 0 ? nn - 1 : nn);
  for (const auto& r : rounds) {
    EXPECT_EQ(r.pairs.size(), nn / 2);
    EXPECT_EQ(r.bye >= 0, n % 2 == 1);
  }
  // All n (n - 1) / 2 pairs, none twice: every pair exactly once.
  EXPECT_EQ(check_rounds(rounds, n), nn * (nn - 1) / 2);
  if (n % 2 == 1) {  // each node has the bye exactly once
    std::set<int> byes;
    for (const auto& r : rounds) byes.insert(r.bye);
    EXPECT_EQ(byes.size(), nn);
  }
}

TEST(PairSchedule, EveryPairExactlyOnceFrom1To64Nodes) {
  for (int n = 0; n <= 64; ++n) check_tournament(n);
}

TEST(PairSchedule, EveryPairExactlyOnceAtFleetSizes) {
  for (int n : {512, 1000, 4096}) check_tournament(n);
}

TEST(PairSchedule, SampledRoundsAreSeededTournamentRounds) {
  for (int n : {2, 3, 8, 9, 64, 129}) {
    const int full = n % 2 == 0 ? n - 1 : n;
    for (int m : {1, 2, 5, full, full + 7}) {
      for (std::uint64_t seed : {1ULL, 42ULL, 0xdeadbeefULL}) {
        SCOPED_TRACE(testing::Message() << n << " nodes, " << m << " rounds, seed " << seed);
        const auto a = sampled_rounds(n, m, seed);
        EXPECT_EQ(static_cast<int>(a.size()), std::min(m, full));
        const auto pairs = check_rounds(a, n);
        EXPECT_EQ(pairs, static_cast<std::size_t>(std::min(m, full)) * static_cast<std::size_t>(n / 2));
        const auto b = sampled_rounds(n, m, seed);
        ASSERT_EQ(a.size(), b.size());
        for (std::size_t r = 0; r < a.size(); ++r) EXPECT_EQ(a[r].pairs, b[r].pairs);
      }
    }
  }
  EXPECT_THROW(sampled_rounds(8, 0, 1), std::invalid_argument);
}

TEST(PairSchedule, SeedsShuffleTheNodeOrder) {
  // Different seeds pick different first rounds (not only relabelled copies of round_robin's).
  std::set<std::vector<std::pair<int, int>>> firsts;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<std::pair<int, int>> round;
    const auto rounds = sampled_rounds(16, 1, seed);  // kept: a range-for over [0] of a temporary would dangle
    for (const auto& p : rounds[0].pairs) round.emplace_back(p.a, p.b);
    firsts.insert(round);
  }
  EXPECT_GT(firsts.size(), 15u);
  const auto plain = round_robin(16);
  std::vector<std::pair<int, int>> r0;
  for (const auto& p : plain[0].pairs) r0.emplace_back(p.a, p.b);
  EXPECT_LT(firsts.count(r0), 2u);
}

TEST(PairSchedule, GpuPairsOneAtATime) {
  for (int g = 0; g <= 9; ++g) {
    const auto ordered = gpu_pair_schedule(g, true);
    const auto unordered = gpu_pair_schedule(g, false);
    EXPECT_EQ(ordered.size(), static_cast<std::size_t>(g * (g > 0 ? g - 1 : 0)));
    EXPECT_EQ(unordered.size(), ordered.size() / 2);
    std::set<std::pair<int, int>> o, u;
    for (const auto& p : ordered) {
      EXPECT_NE(p.src, p.dst);
      o.insert({p.src, p.dst});
    }
    for (const auto& p : unordered) {
      EXPECT_LT(p.src, p.dst);
      u.insert({p.src, p.dst});
    }
    EXPECT_EQ(o.size(), ordered.size());
    EXPECT_EQ(u.size(), unordered.size());
  }
  EXPECT_EQ(gpu_pair_schedule(3, true),
            (std::vector<GpuPair>{{0, 1}, {0, 2}, {1, 0}, {1, 2}, {2, 0}, {2, 1}}));
  EXPECT_EQ(gpu_pair_schedule(3, false), (std::vector<GpuPair>{{0, 1}, {0, 2}, {1, 2}}));
}

TEST(RailGroups, LocalRankIWithLocalRankI) {
  // Ranks placed round-robin over the nodes (node A holds 0, 2, 4, 6), as a launcher may place them.
  EXPECT_EQ(rail_groups({0, 2, 4, 6}, {1, 3, 5, 7}),
            (std::vector<RailGroup>{{0, 0, 1}, {1, 2, 3}, {2, 4, 5}, {3, 6, 7}}));
  EXPECT_EQ(rail_groups({8, 9}, {0, 1}), (std::vector<RailGroup>{{0, 8, 0}, {1, 9, 1}}));
}

TEST(RailGroups, RailsBeyondTheSmallerNodeHaveNoGroup) {
  EXPECT_EQ(rail_groups({0, 1, 2, 3}, {4, 5}), (std::vector<RailGroup>{{0, 0, 4}, {1, 1, 5}}));
  EXPECT_EQ(rail_groups({4}, {0, 1, 2}), (std::vector<RailGroup>{{0, 4, 0}}));
  EXPECT_TRUE(rail_groups({}, {0, 1}).empty());
}

TEST(RailGroups, EveryRankOfARoundIsInAtMostOneGroupWithItsCounterpart) {
  std::mt19937 rng(static_cast<std::uint32_t>(test_seed()));
  for (int trial = 0; trial < 50; ++trial) {
    const int nodes = std::uniform_int_distribution<int>(2, 13)(rng);
    std::vector<std::vector<int>> ranks(static_cast<std::size_t>(nodes));
    int next = 0;
    for (auto& rs : ranks)
      for (int k = std::uniform_int_distribution<int>(1, 8)(rng); k > 0; --k) rs.push_back(next++);
    for (const auto& round : round_robin(nodes)) {
      std::set<int> seen;
      std::size_t expected = 0;
      for (const auto& p : round.pairs) {
        const auto& a = ranks[static_cast<std::size_t>(p.a)];
        const auto& b = ranks[static_cast<std::size_t>(p.b)];
        const auto groups = rail_groups(a, b);
        expected += std::min(a.size(), b.size());
        ASSERT_EQ(groups.size(), std::min(a.size(), b.size()));
        for (const auto& g : groups) {
          EXPECT_EQ(g.a, a[static_cast<std::size_t>(g.rail)]);
          EXPECT_EQ(g.b, b[static_cast<std::size_t>(g.rail)]);
          EXPECT_TRUE(seen.insert(g.a).second) << g.a << " in two groups";
          EXPECT_TRUE(seen.insert(g.b).second) << g.b << " in two groups";
        }
      }
      EXPECT_EQ(seen.size(), 2 * expected);
    }
  }
}

}  // namespace
}  // namespace gpuscale
