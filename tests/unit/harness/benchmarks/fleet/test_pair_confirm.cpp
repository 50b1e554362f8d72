// The confirming pass of the node-pair matrix (harness/benchmarks/fleet/pair_confirm.h): when a pass shows a suspect,
// and which pass each cell keeps.
#include "harness/benchmarks/fleet/pair_confirm.h"

#include <cmath>
#include <limits>
#include <random>

#include <gtest/gtest.h>

namespace gpuscale {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An m-node matrix of random values around 10 (2% noise), small random spreads; node `slow` (if any)
// has every pair at `factor` of that.
PairCells matrix(std::size_t m, std::mt19937& rng, int slow = -1, double factor = 1) {
  std::uniform_real_distribution<double> noise(0.98, 1.02), spread(0.0, 0.02);
  PairCells c;
  for (auto& t : c) t.assign(m * m, kNaN);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = i + 1; j < m; ++j) {
      double v = 10 * noise(rng);
      if (static_cast<int>(i) == slow || static_cast<int>(j) == slow) v *= factor;
      const double d = spread(rng), u = spread(rng);
      for (auto [a, b] : {std::pair{i, j}, std::pair{j, i}}) {
        c[0][a * m + b] = v;
        c[1][a * m + b] = d;
        c[2][a * m + b] = u;
      }
    }
  return c;
}

std::vector<std::string> hosts(std::size_t m) {
  std::vector<std::string> h;
  for (std::size_t i = 0; i < m; ++i) h.push_back("n" + std::to_string(i));
  return h;
}

// The run's rule with a fixed floor `fraction` (--outlier) beside the noise's bar.
OutlierRule at(double fraction) {
  OutlierRule rule;
  rule.fraction = fraction;
  return rule;
}

std::vector<std::vector<int>> ranks(std::size_t m) {
  std::vector<std::vector<int>> r;
  for (std::size_t i = 0; i < m; ++i) r.push_back({static_cast<int>(2 * i), static_cast<int>(2 * i + 1)});
  return r;
}

TEST(PairConfirm, ASlowNodeIsASuspectAndACleanMatrixIsNot) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 50; ++trial) {
    EXPECT_FALSE(pass_has_suspects(matrix(8, rng), hosts(8), ranks(8), at(0.1))) << trial;
    EXPECT_TRUE(pass_has_suspects(matrix(8, rng, 3, 0.5), hosts(8), ranks(8), at(0.1))) << trial;
  }
  // The run's fraction decides: 50% below is a suspect at 0.1, not at 0.7.
  EXPECT_FALSE(pass_has_suspects(matrix(8, rng, 3, 0.5), hosts(8), ranks(8), at(0.7)));
}

TEST(PairConfirm, TooFewNodesOrNothingMeasuredNamesNoSuspect) {
  std::mt19937 rng(12);
  EXPECT_FALSE(pass_has_suspects(matrix(2, rng, 1, 0.1), hosts(2), ranks(2), at(0.1)));
  PairCells empty;
  for (auto& t : empty) t.assign(64, kNaN);
  EXPECT_FALSE(pass_has_suspects(empty, hosts(8), ranks(8), at(0.1)));
}

TEST(PairConfirm, EachCellKeepsItsBetterPassWithItsSpreads) {
  PairCells a{{{1, 5, kNaN, kNaN}, {0.1, 0.5, kNaN, kNaN}, {0.2, 0.6, kNaN, kNaN}}};
  PairCells b{{{2, 4, 3, kNaN}, {0.3, 0.7, 0.9, kNaN}, {0.4, 0.8, 1.0, kNaN}}};
  const auto best = best_cells(a, b);
  EXPECT_EQ(best[0][0], 2);    // the second pass measured higher: its value and spreads
  EXPECT_EQ(best[1][0], 0.3);
  EXPECT_EQ(best[2][0], 0.4);
  EXPECT_EQ(best[0][1], 5);    // the first pass measured higher: kept
  EXPECT_EQ(best[1][1], 0.5);
  EXPECT_EQ(best[0][2], 3);    // measured only in the second pass
  EXPECT_EQ(best[2][2], 1.0);
  EXPECT_TRUE(std::isnan(best[0][3]));  // in neither
}

TEST(PairConfirm, ASickNodeSurvivesTheConfirmingPassAndAStarvedOneDoesNot) {
  std::mt19937 rng(13);
  // Sick: slow in both passes. Starved: slow in the first pass only.
  const auto sick = best_cells(matrix(8, rng, 5, 0.5), matrix(8, rng, 5, 0.5));
  EXPECT_TRUE(pass_has_suspects(sick, hosts(8), ranks(8), at(0.1)));
  const auto starved = best_cells(matrix(8, rng, 5, 0.5), matrix(8, rng));
  EXPECT_FALSE(pass_has_suspects(starved, hosts(8), ranks(8), at(0.1)));
}

// Each node's rank on one rail (rail `rail` of nodes of 2 ranks, as ranks() places them).
std::vector<std::vector<int>> rail_ranks(std::size_t m, int rail) {
  std::vector<std::vector<int>> r;
  for (std::size_t i = 0; i < m; ++i) r.push_back({static_cast<int>(2 * i) + rail});
  return r;
}

TEST(PairConfirm, ASlowNicIsASuspectOnItsRailAndInTheSlowestRailNodeMatrix) {
  std::mt19937 rng(14);
  // Node 5's rail 1 at a fifth: its rail matrix and the node matrix (each pair's slowest rail) name it;
  // rail 0 does not.
  const std::vector<PairCells> rails = {matrix(8, rng), matrix(8, rng, 5, 0.2)};
  EXPECT_FALSE(pass_has_suspects(rails[0], hosts(8), rail_ranks(8, 0), at(0.1)));
  EXPECT_TRUE(pass_has_suspects(rails[1], hosts(8), rail_ranks(8, 1), at(0.1)));
  EXPECT_TRUE(pass_has_suspects(slowest_rail(rails), hosts(8), ranks(8), at(0.1)));
  // Kept per rail, the better pass of each: slow in both passes stays, slow in one goes.
  const std::vector<PairCells> again = {matrix(8, rng, 2, 0.2), matrix(8, rng, 5, 0.2)};
  std::vector<PairCells> best;
  for (std::size_t r = 0; r < 2; ++r) best.push_back(best_cells(rails[r], again[r]));
  EXPECT_FALSE(pass_has_suspects(best[0], hosts(8), rail_ranks(8, 0), at(0.1)));  // node 2, starved once
  EXPECT_TRUE(pass_has_suspects(best[1], hosts(8), rail_ranks(8, 1), at(0.1)));
}

TEST(PairConfirm, TheSuspectPairsAreASlowNodesPairsOrASlowLinkAndNoneOfACleanMatrix) {
  std::mt19937 rng(15);
  EXPECT_TRUE(suspect_pairs(matrix(8, rng), hosts(8), ranks(8), at(0.1)).empty());
  // Node 3 slow: its 7 pairs, each once, a < b.
  const auto node = suspect_pairs(matrix(8, rng, 3, 0.5), hosts(8), ranks(8), at(0.1));
  ASSERT_EQ(node.size(), 7u);
  for (const auto& p : node) {
    EXPECT_TRUE(p.a == 3 || p.b == 3);
    EXPECT_LT(p.a, p.b);
  }
  // The link between nodes 2 and 6 at a fifth: that pair alone.
  auto link = matrix(8, rng);
  for (auto c : {2 * 8 + 6, 6 * 8 + 2}) link[0][static_cast<std::size_t>(c)] *= 0.2;
  EXPECT_EQ(suspect_pairs(link, hosts(8), ranks(8), at(0.1)), (std::vector<NodePair>{{2, 6}}));
  // Each as a round of its own.
  const auto rounds = rounds_of(node);
  ASSERT_EQ(rounds.size(), 7u);
  for (std::size_t i = 0; i < rounds.size(); ++i) EXPECT_EQ(rounds[i].pairs, std::vector<NodePair>{node[i]});
  EXPECT_EQ(unique_pairs({{1, 2}, {0, 5}, {1, 2}, {0, 3}}), (std::vector<NodePair>{{0, 3}, {0, 5}, {1, 2}}));
}

}  // namespace
}  // namespace gpuscale
