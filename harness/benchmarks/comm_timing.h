#pragma once
// How long communicators take to make. NCCL's init grows with the ranks and is the fleet tournament's
// main setup cost (a pair communicator per round and pass): each creation is timed, the row records it
// (metrics.init_s), and the run's slowest so far bounds the watchdog's per-round setup allowance
// (pair_setup_allowance_s) instead of a constant that is too long on 8 GPUs and too short on 10,000.
#include <functional>
#include <memory>

#include "collectives/communicator.h"

namespace gpuscale {

// `make()`, timed: the seconds go to `*seconds` (when not null) and into the process's slowest.
std::unique_ptr<Communicator> timed_communicator(const std::function<std::unique_ptr<Communicator>()>& make,
                                                 double* seconds);
// The slowest creation this process has timed (0: none yet).
double slowest_communicator_init_s();

// Seconds the watchdog allows for one pair communicator and its warm-up: kPairSetupFloorS until a
// creation was measured, then kPairSetupMultiple times the slowest one (never below the floor).
inline constexpr double kPairSetupFloorS = 2.0;
inline constexpr double kPairSetupMultiple = 4.0;
double pair_setup_allowance_s(double slowest_init_s);

}  // namespace gpuscale
