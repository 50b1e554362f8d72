#pragma once
// This rank's progress: a count of completed steps of work (a timed repetition, one collective
// operation, a point begun, a turn of sequential tiling ended) and how long ago the last one came. The
// watchdog judges a point by it (harness/guard/watchdog.h): a slow host still completes steps, a hung
// rank does not. Here, at the bottom, so whatever completes a step marks it: the transports' operation
// loops (collectives/), the drivers' repetitions (harness/), the MPI seam's turns (world/).
// A mark is a clock read and two relaxed atomic writes, so it may sit inside a timed loop.
#include <cstdint>

namespace gpuscale {

// One step of this rank's work completed. Any thread.
void note_progress();

struct ProgressReading {
  std::uint64_t steps = 0;  // since the process started
  double idle_s = 0;        // seconds since the last step (or since the process started, before any)
};
ProgressReading current_progress();

}  // namespace gpuscale
