// world/world under mpirun (5 ranks acting as interleaved hosts): the two-level gather to rank 0 gives
// every rank's string in rank order, whatever its bytes, a node leader's broadcast reaches exactly
// its own node's ranks, and a turn barrier (waiting asleep) lets no rank past before the last arrives.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <functional>
#include <random>
#include <thread>

#include "world/world.h"

namespace gpuscale {
namespace {

// Hosts that interleave so node-local order differs from world order: {a, b, a, c, b, a, ...}.
std::vector<std::string> interleaved(int size) {
  const char* names[] = {"a", "b", "a", "c", "b"};
  std::vector<std::string> h;
  for (int r = 0; r < size; ++r) h.emplace_back(names[r % 5]);
  return h;
}

// Every rank's string for a trial, the same on every rank (a shared seed): random bytes, some empty.
std::string text_of(int rank, int trial) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(trial) * 1000 + static_cast<std::uint64_t>(rank) + 17);
  std::string s(rng() % 3 == 0 ? 0 : rng() % 5000, '\0');
  for (auto& c : s) c = static_cast<char>(rng() % 256);
  return s;
}

TEST(MpiWorld, TwoLevelGatherKeepsRankOrder) {
  World world(nullptr, nullptr);
  world.act_as_hosts(interleaved(world.size()));
  EXPECT_EQ(world.node_leader(), world.tree().members[static_cast<std::size_t>(world.tree().node[static_cast<std::size_t>(world.rank())])].front());
  for (int trial = 0; trial < 20; ++trial) {
    const auto got = world.gather_to_root(text_of(world.rank(), trial));
    if (world.rank() != 0) {
      EXPECT_TRUE(got.empty());
      continue;
    }
    ASSERT_EQ(got.size(), static_cast<std::size_t>(world.size()));
    for (int r = 0; r < world.size(); ++r) EXPECT_EQ(got[static_cast<std::size_t>(r)], text_of(r, trial)) << "rank " << r;
  }
}

TEST(MpiWorld, NodeLeaderBroadcastStaysOnItsNode) {
  World world(nullptr, nullptr);
  world.act_as_hosts(interleaved(world.size()));
  const std::string mine = world.is_node_leader() ? "from leader " + std::to_string(world.rank()) : "ignored";
  EXPECT_EQ(world.broadcast_from_node_leader(mine), "from leader " + std::to_string(world.node_leader()));
}

// The ranks arrive at a turn barrier at staggered times (the slowest 80 ms late): each leaves after
// every rank's arrival. steady_clock is the host's monotonic clock, one for every process on it, and
// load only delays a departure, so the check cannot fail by timing.
void expect_turn_barrier_waits_for_all(int rank, int size, MPI_Comm comm, const std::function<void()>& turn_barrier) {
  using clock = std::chrono::steady_clock;
  std::this_thread::sleep_for(std::chrono::milliseconds(20 * ((rank * 3) % size % 5)));
  const double arrived = std::chrono::duration<double>(clock::now().time_since_epoch()).count();
  turn_barrier();
  const double left = std::chrono::duration<double>(clock::now().time_since_epoch()).count();
  double last = 0;
  MPI_Allreduce(&arrived, &last, 1, MPI_DOUBLE, MPI_MAX, comm);
  EXPECT_GE(left, last) << "rank " << rank << " left the turn barrier before the last rank arrived";
}

TEST(MpiWorld, TurnBarrierHoldsEveryRankUntilTheLastArrives) {
  World world(nullptr, nullptr);
  for (int round = 0; round < 3; ++round)
    expect_turn_barrier_waits_for_all(world.rank(), world.size(), world.comm(), [&] { world.turn_barrier(); });
  const Group even(world, world.rank() % 2 == 0 ? 0 : -1, world.rank());  // a group of some ranks only
  if (even.member())
    expect_turn_barrier_waits_for_all(even.rank(), even.size(), even.comm(), [&] { even.turn_barrier(); });
}

}  // namespace
}  // namespace gpuscale
