// harness/run/repetition_turns under mpirun (5 ranks: four rounds of one rank, one idle rank): the
// turns come in the order rep_order_plan gives them, each after the one before it has ended (every
// turn is stamped on the host's monotonic clock when it starts and when it ends; turn barriers order
// them, so the check is causal, not a timing), and every rank leaves the row having passed every
// barrier, the idle one and one that stops timing part-way (a driver that failed) included: a count
// that did not match would hang the next trial, and the test with it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include "core/error.h"
#include "harness/plan/rep_order_plan.h"
#include "harness/run/repetition_turns.h"
#include "world/world.h"

namespace gpuscale {
namespace {

// The host's monotonic clock, shared by every process on it (MPI_Wtime counts from each process's
// own origin in Open MPI), in nanoseconds: exact in a double for 104 days of uptime.
double now_ns() {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

TEST(MpiRepetitionTurns, TurnsComeInThePlansOrderAndEveryRankPassesThemAll) {
  World world(nullptr, nullptr);
  const int rounds = world.size() - 1;  // the last rank measures nothing
  for (int trial = 0; trial < 12; ++trial) {
    std::mt19937 rng(static_cast<unsigned>(trial) + 44);  // the same draws on every rank
    const int reps = std::uniform_int_distribution<int>(1, 6)(rng);
    const auto order = trial % 2 == 0 ? RepOrder::interleaved : RepOrder::blocked;
    const int failing = std::uniform_int_distribution<int>(0, rounds - 1)(rng);
    const int stops_after = std::uniform_int_distribution<int>(0, reps - 1)(rng);
    const auto turns = repetition_turns(static_cast<std::size_t>(rounds), reps, order);
    const int round = world.rank() < rounds ? world.rank() : -1;
    RepetitionTurns gate(world, turns, round);
    std::vector<double> stamps;  // rep, start, end for each repetition this rank timed
    for (int rep = 0; round >= 0 && rep < reps; ++rep) {
      if (round == failing && rep > stops_after) break;
      gate.wait(rep);
      const double start = now_ns();
      const double end = now_ns();
      stamps.insert(stamps.end(), {static_cast<double>(rep), start, end});
    }
    gate.finish();
    EXPECT_THROW(RepetitionTurns(world, turns, round).wait(reps), Error);  // no such turn: throws before waiting
    // Rank 0 gathers every rank's stamps and orders them by start.
    int n = static_cast<int>(stamps.size());
    std::vector<int> counts(static_cast<std::size_t>(world.size()));
    MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<int> displs(counts.size(), 0);
    for (std::size_t i = 1; i < counts.size(); ++i) displs[i] = displs[i - 1] + counts[i - 1];
    std::vector<double> all(static_cast<std::size_t>(displs.back() + counts.back()));
    MPI_Gatherv(stamps.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (world.rank() != 0) continue;
    struct Seen {
      RepTurn turn;
      double start, end;
    };
    std::vector<Seen> seen;
    for (std::size_t r = 0; r < counts.size(); ++r)
      for (int i = displs[r]; i < displs[r] + counts[r]; i += 3)
        seen.push_back({{r, static_cast<int>(all[static_cast<std::size_t>(i)])}, all[static_cast<std::size_t>(i) + 1],
                        all[static_cast<std::size_t>(i) + 2]});
    std::sort(seen.begin(), seen.end(), [](const Seen& a, const Seen& b) { return a.start < b.start; });
    // The plan's turns less those of the failing round it never took.
    std::vector<RepTurn> expected;
    for (const auto& t : turns)
      if (!(static_cast<int>(t.round) == failing && t.rep > stops_after)) expected.push_back(t);
    ASSERT_EQ(seen.size(), expected.size()) << "trial " << trial;
    for (std::size_t i = 0; i < seen.size(); ++i) {
      EXPECT_EQ(seen[i].turn, expected[i]) << "trial " << trial << " turn " << i;
      if (i > 0) {
        EXPECT_LE(seen[i - 1].end, seen[i].start) << "trial " << trial << ": turn " << i << " began before the last ended";
      }
    }
  }
}

}  // namespace
}  // namespace gpuscale
