#pragma once
// In what order the groups of a GPU count time their repetitions when they take turns (--tiling
// sequential, docs/fleet.md "Tiled GPU counts"; issue 44). Blocked, a group times every repetition in
// its one turn, so a slow stretch of the machine (a 2-core VM's memory bandwidth swings 35-65 GB/s from
// one moment to the next) lands on whichever group holds the turn and makes it look slow. Interleaved,
// every group's first repetition comes before any group's second, so each group's repetitions are
// spread over the whole span and the drift falls on all groups alike. Pure: counts in, turns out;
// harness/run/repetition_turns.h waits for them.
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "harness/options/run_modes.h"  // RepOrder

namespace gpuscale {

// One turn: the round of groups (an index into tiling_rounds) that times one repetition, alone.
struct RepTurn {
  std::size_t round = 0;
  int rep = 0;
  bool operator==(const RepTurn&) const = default;
};

// The turns of a row, in time order: every (round, rep) of `rounds` x `reps` once. Interleaved: all
// rounds' repetition 0, then all rounds' repetition 1 ..., the rounds forward on even repetitions and
// backward on odd ones, so over each two repetitions every round's mean place is the same (a drift
// linear in time weighs on every round alike; forward every time, the last round would always come
// G - 1 turns after the first). Blocked: round 0's every repetition, then round 1's ... Empty when
// either count is 0 (reps < 0 is 0).
std::vector<RepTurn> repetition_turns(std::size_t rounds, int reps, RepOrder order);

// The places in `turns` of `round`'s turns, in repetition order (repetition i is at index i).
std::vector<std::size_t> turns_of_round(const std::vector<RepTurn>& turns, std::size_t round);

// How a row's repetitions were ordered in time, as its metrics.rep_order records it.
enum class RowOrder {
  concurrent,   // one round: its groups timed their repetitions at the same time
  blocked,      // rounds in turns, each round's repetitions in one turn (two passes, the second reversed)
  interleaved,  // rounds in turns, one repetition a turn (repetition_turns)
};

// The row's order: concurrent for one round (or none); else interleaved when asked and the benchmark
// times its repetitions through the run's gate (`gated_reps`: how many, Benchmark::timed_repetitions;
// none, or none to time, leaves the turns blocked); else blocked.
RowOrder row_order(std::size_t rounds, RepOrder asked, std::optional<int> gated_reps);
std::string_view row_order_name(RowOrder order);

}  // namespace gpuscale
