// The pair matrices' cells (harness/benchmarks/fleet/pair_cells.h): the members' round records placed into the matrices
// every rank holds, and the node-pair matrix of a rail-by-rail measurement as each pair's slowest rail.
#include "harness/benchmarks/fleet/pair_cells.h"

#include <cmath>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "test_seed.h"

namespace gpuscale {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(PairCells, RecordsLandInBothOrdersOfTheirMatrixAndTheFirstWins) {
  // 2 matrices of 3 x 3: (matrix 1, 0, 2) twice (the pair's two members), (matrix 0, 1, 2), nothing.
  const std::vector<double> records = {1 * 9 + 0 * 3 + 2, 5, 0.1, 0.2,  1 * 9 + 0 * 3 + 2, 6, 0.3, 0.4,
                                       0 * 9 + 1 * 3 + 2, 7, 0.5, 0.6,  kNaN, kNaN, kNaN, kNaN};
  const auto cells = place_records(records, 2, 3, false);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[1][0][0 * 3 + 2], 5);
  EXPECT_EQ(cells[1][0][2 * 3 + 0], 5);
  EXPECT_EQ(cells[1][1][2 * 3 + 0], 0.1);
  EXPECT_EQ(cells[1][2][0 * 3 + 2], 0.2);
  EXPECT_EQ(cells[0][0][1 * 3 + 2], 7);
  EXPECT_EQ(cells[0][0][2 * 3 + 1], 7);
  std::size_t measured = 0;
  for (const auto& m : cells)
    for (double v : m[0]) measured += std::isfinite(v) ? 1 : 0;
  EXPECT_EQ(measured, 4u);
  // Directed: the one order only.
  const auto directed = place_records(records, 2, 3, true);
  EXPECT_EQ(directed[1][0][0 * 3 + 2], 5);
  EXPECT_TRUE(std::isnan(directed[1][0][2 * 3 + 0]));
}

TEST(PairCells, RecordsThatAreNoCellAreIgnored) {
  const std::vector<double> records = {-1, 5, 0, 0,  18, 5, 0, 0,  1.5, 5, 0, 0,  3, kNaN, 0, 0,  4, 9, 0};
  const auto cells = place_records(records, 2, 3, false);  // 18 cells: 0 .. 17; the last record is cut short
  for (const auto& m : cells)
    for (double v : m[0]) EXPECT_TRUE(std::isnan(v));
}

TEST(PairCells, RandomRoundRecordsRebuildTheMatrices) {
  std::mt19937 rng(static_cast<std::uint32_t>(test_seed()));
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t m = std::uniform_int_distribution<std::size_t>(2, 12)(rng);
    const std::size_t matrices = std::uniform_int_distribution<std::size_t>(1, 8)(rng);
    std::vector<PairCells> want(matrices);
    for (auto& c : want)
      for (auto& t : c) t.assign(m * m, kNaN);
    std::vector<double> records;
    std::uniform_real_distribution<double> value(1, 100);
    for (std::size_t k = 0; k < matrices; ++k)
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = i + 1; j < m; ++j) {
          if (rng() % 4 == 0) continue;  // not measured (a sampled round, a missing rail)
          const double v = value(rng), d = value(rng) / 1000, u = value(rng) / 1000;
          for (auto c : {i * m + j, j * m + i}) {
            want[k][0][c] = v;
            want[k][1][c] = d;
            want[k][2][c] = u;
          }
          records.insert(records.end(), {static_cast<double>((k * m + i) * m + j), v, d, u});
          records.insert(records.end(), {kNaN, kNaN, kNaN, kNaN});  // a rank that sat the round out
        }
    const auto got = place_records(records, matrices, m, false);
    for (std::size_t k = 0; k < matrices; ++k)
      for (std::size_t t = 0; t < 3; ++t)
        for (std::size_t c = 0; c < m * m; ++c) {
          if (std::isnan(want[k][t][c])) {
            EXPECT_TRUE(std::isnan(got[k][t][c]));
          } else {
            EXPECT_EQ(got[k][t][c], want[k][t][c]);
          }
        }
  }
}

TEST(PairCells, TheNodeMatrixIsEachPairsSlowestRailWithItsSpreads) {
  // 2 x 2 cells; 3 rails. Cell 1: rail 2 slowest; cell 2: only rail 0 measured it; cell 3: no rail.
  std::vector<PairCells> rails = {
      {{{kNaN, 9, 4, kNaN}, {kNaN, 0.01, 0.04, kNaN}, {kNaN, 0.02, 0.05, kNaN}}},
      {{{kNaN, 8, kNaN, kNaN}, {kNaN, 0.11, kNaN, kNaN}, {kNaN, 0.12, kNaN, kNaN}}},
      {{{kNaN, 3, kNaN, kNaN}, {kNaN, 0.21, kNaN, kNaN}, {kNaN, 0.22, kNaN, kNaN}}},
  };
  std::vector<int> from;
  const auto node = slowest_rail(rails, &from);
  EXPECT_EQ(node[0][1], 3);
  EXPECT_EQ(node[1][1], 0.21);
  EXPECT_EQ(node[2][1], 0.22);
  EXPECT_EQ(node[0][2], 4);
  EXPECT_EQ(node[1][2], 0.04);
  EXPECT_TRUE(std::isnan(node[0][0]) && std::isnan(node[0][3]));
  EXPECT_EQ(from, (std::vector<int>{-1, 2, 0, -1}));
  rails[1][2].pop_back();
  EXPECT_THROW((void)slowest_rail(rails), std::invalid_argument);
  EXPECT_TRUE(slowest_rail({})[0].empty());
}

TEST(PairCells, RandomRailsGiveTheMinimumOfEachCell) {
  std::mt19937 rng(static_cast<std::uint32_t>(test_seed()));
  std::uniform_real_distribution<double> value(1, 50);
  for (int trial = 0; trial < 50; ++trial) {
    const std::size_t cells = 36, n = std::uniform_int_distribution<std::size_t>(1, 8)(rng);
    std::vector<PairCells> rails(n);
    for (auto& r : rails) {
      for (auto& t : r) t.assign(cells, kNaN);
      for (std::size_t c = 0; c < cells; ++c)
        if (rng() % 5 != 0) r[0][c] = value(rng), r[1][c] = value(rng) / 100, r[2][c] = value(rng) / 100;
    }
    std::vector<int> from;
    const auto node = slowest_rail(rails, &from);
    for (std::size_t c = 0; c < cells; ++c) {
      double lowest = kNaN;
      for (const auto& r : rails)
        if (std::isfinite(r[0][c]) && !(lowest <= r[0][c])) lowest = r[0][c];
      if (std::isnan(lowest)) {
        EXPECT_TRUE(std::isnan(node[0][c]));
        EXPECT_EQ(from[c], -1);
        continue;
      }
      EXPECT_EQ(node[0][c], lowest);
      ASSERT_GE(from[c], 0);
      EXPECT_EQ(node[1][c], rails[static_cast<std::size_t>(from[c])][1][c]);
      EXPECT_EQ(node[2][c], rails[static_cast<std::size_t>(from[c])][2][c]);
    }
  }
}

}  // namespace
}  // namespace gpuscale
