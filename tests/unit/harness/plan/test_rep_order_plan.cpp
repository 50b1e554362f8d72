// harness/plan/rep_order_plan: the turns of groups that take turns. Every (round, repetition) once;
// each round's repetitions in order; interleaved, no round's repetition i + 1 before every round's
// repetition i, the rounds forward then backward, every round's mean place equal over each two
// repetitions; blocked, each round's repetitions back to back. Seeded random counts.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "harness/plan/rep_order_plan.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

struct Shape {
  std::size_t rounds;
  int reps;
};

std::vector<Shape> random_shapes(std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<std::size_t> rounds(1, 40);
  std::uniform_int_distribution<int> reps(1, 25);
  std::vector<Shape> out;
  for (int i = 0; i < 200; ++i) out.push_back({rounds(gen), reps(gen)});
  return out;
}

// Every (round, rep) exactly once, and the places turns_of_round gives are that round's, repetition i at i.
void expect_every_turn_once(const std::vector<RepTurn>& turns, const Shape& s) {
  ASSERT_EQ(turns.size(), s.rounds * static_cast<std::size_t>(s.reps));
  std::set<std::pair<std::size_t, int>> seen;
  for (const auto& t : turns) {
    ASSERT_LT(t.round, s.rounds);
    ASSERT_GE(t.rep, 0);
    ASSERT_LT(t.rep, s.reps);
    EXPECT_TRUE(seen.insert({t.round, t.rep}).second) << "round " << t.round << " rep " << t.rep << " twice";
  }
  for (std::size_t q = 0; q < s.rounds; ++q) {
    const auto places = turns_of_round(turns, q);
    ASSERT_EQ(places.size(), static_cast<std::size_t>(s.reps));
    for (std::size_t i = 0; i < places.size(); ++i) {
      EXPECT_EQ(turns[places[i]].round, q);
      EXPECT_EQ(turns[places[i]].rep, static_cast<int>(i));
      if (i > 0) {
        EXPECT_LT(places[i - 1], places[i]) << "round " << q << "'s repetitions out of order";
      }
    }
  }
}

TEST(RepOrderPlan, InterleavedSpreadsEveryRoundOverTheSpan) {
  for (const auto& s : random_shapes(test_seed())) {
    const auto turns = repetition_turns(s.rounds, s.reps, RepOrder::interleaved);
    expect_every_turn_once(turns, s);
    for (std::size_t t = 0; t < turns.size(); ++t) {
      // Repetition r fills turns [r G, (r + 1) G): no round runs ahead of another.
      EXPECT_EQ(static_cast<std::size_t>(turns[t].rep), t / s.rounds);
      const std::size_t place = t % s.rounds;  // forward on even repetitions, backward on odd ones
      EXPECT_EQ(turns[t].round, turns[t].rep % 2 == 0 ? place : s.rounds - 1 - place);
    }
    // Over each two repetitions every round's places add up alike: a linear drift weighs on all.
    for (int r = 0; r + 1 < s.reps; r += 2)
      for (std::size_t q = 0; q < s.rounds; ++q) {
        const auto places = turns_of_round(turns, q);
        EXPECT_EQ(places[static_cast<std::size_t>(r)] + places[static_cast<std::size_t>(r + 1)],
                  (2 * static_cast<std::size_t>(r) + 1) * s.rounds + s.rounds - 1);
      }
  }
}

TEST(RepOrderPlan, BlockedKeepsEachRoundsRepetitionsTogether) {
  for (const auto& s : random_shapes(test_seed())) {
    const auto turns = repetition_turns(s.rounds, s.reps, RepOrder::blocked);
    expect_every_turn_once(turns, s);
    for (std::size_t t = 0; t < turns.size(); ++t)
      EXPECT_EQ(turns[t], (RepTurn{t / static_cast<std::size_t>(s.reps), static_cast<int>(t % static_cast<std::size_t>(s.reps))}));
  }
}

TEST(RepOrderPlan, NothingToOrder) {
  EXPECT_TRUE(repetition_turns(0, 10, RepOrder::interleaved).empty());
  EXPECT_TRUE(repetition_turns(16, 0, RepOrder::interleaved).empty());
  EXPECT_TRUE(repetition_turns(16, -3, RepOrder::blocked).empty());
  EXPECT_TRUE(turns_of_round(repetition_turns(4, 3, RepOrder::interleaved), 7).empty());
  // One round: interleaved and blocked are the same order.
  EXPECT_EQ(repetition_turns(1, 9, RepOrder::interleaved), repetition_turns(1, 9, RepOrder::blocked));
}

TEST(RepOrderPlan, RowOrder) {
  std::mt19937_64 gen(test_seed());
  std::uniform_int_distribution<std::size_t> rounds(2, 64);
  std::uniform_int_distribution<int> reps(1, 30);
  for (int i = 0; i < 100; ++i) {
    const std::size_t q = rounds(gen);
    const int r = reps(gen);
    EXPECT_EQ(row_order(q, RepOrder::interleaved, r), RowOrder::interleaved);
    EXPECT_EQ(row_order(q, RepOrder::blocked, r), RowOrder::blocked);
    EXPECT_EQ(row_order(q, RepOrder::interleaved, std::nullopt), RowOrder::blocked);  // the driver takes no turns
    EXPECT_EQ(row_order(q, RepOrder::interleaved, 0), RowOrder::blocked);
    EXPECT_EQ(row_order(gen() % 2, RepOrder::interleaved, r), RowOrder::concurrent);  // 0 or 1 round
  }
  EXPECT_EQ(row_order_name(RowOrder::concurrent), "concurrent");
  EXPECT_EQ(row_order_name(RowOrder::blocked), "blocked");
  EXPECT_EQ(row_order_name(RowOrder::interleaved), "interleaved");
}

TEST(RepOrderPlan, OptionParses) {
  for (auto o : {RepOrder::interleaved, RepOrder::blocked}) EXPECT_EQ(parse_rep_order(rep_order_name(o)), o);
  try {
    parse_rep_order("shuffled");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find("--rep-order 'shuffled'"), std::string::npos);
  }
}

}  // namespace
}  // namespace gpuscale
