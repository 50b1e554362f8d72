#pragma once
// A communicator that tells the stall report where this rank is. Every benchmark that makes one (the
// GPU-count groups, train-step's, the fleet pairs') wraps it, so the guard (harness/guard/) can tell the
// ranks blocked in a collective from the one stalled in its own work.
#include <memory>

#include "collectives/communicator.h"

namespace gpuscale {

// A communicator whose operations mark this rank as "in collective" (world/activity.h), so a stall
// report tells the ranks blocked in a collective from the one stalled in its own work.
std::unique_ptr<Communicator> watch_communicator(std::unique_ptr<Communicator> inner);

}  // namespace gpuscale
