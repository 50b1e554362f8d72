#include "harness/run/repetition_turns.h"

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale {

RepetitionTurns::RepetitionTurns(const World& world, const std::vector<RepTurn>& turns, int round)
    : world_(world), total_(turns.size() + 1) {
  if (round < 0) return;
  for (std::size_t t : turns_of_round(turns, static_cast<std::size_t>(round))) starts_.push_back(t + 1);
}

void RepetitionTurns::wait(int rep) {
  if (rep < 0 || static_cast<std::size_t>(rep) >= starts_.size())
    throw Error(fmt::format("timed repetition {} has no turn (internal: the benchmark's timed_repetitions says {})", rep,
                            starts_.size()));
  pass_until(starts_[static_cast<std::size_t>(rep)]);
}

void RepetitionTurns::pass_until(std::size_t barriers) {
  // The ranks not in the turn wait for it asleep, leaving their cores to the group timing
  // (world/patient_wait.h); only the barrier before this rank's own turn is polled from the short
  // pause, the others at the cap, so the fifteen ranks waiting through a 7 ms STREAM turn on 2 cores
  // do not all wake in its first milliseconds.
  for (; passed_ < barriers; ++passed_) world_.turn_barrier(passed_ + 1 == barriers && barriers < total_);
}

}  // namespace gpuscale
