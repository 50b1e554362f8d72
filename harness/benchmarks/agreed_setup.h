#pragma once
// A point's setup (buffers, streams, a prepared collective) agreed by the whole group before anything
// is timed: a rank whose setup fails would otherwise leave the others waiting in the first barrier of
// the timed loop until the watchdog ends the run. With one MPI_Allreduce after setup, a failure on any
// member fails the row on every member, and the run goes on to the next point.
#include <functional>
#include <string>

#include "world/world.h"

namespace gpuscale {

// The message of a member whose own setup succeeded while world rank `failed_rank`'s did not.
std::string setup_failed_elsewhere(int failed_rank);

// Runs `setup` on this member, then agrees with the group. Throws gpuscale::Error on every member when
// any member's setup threw: the failing member's with its own message, naming its rank. The test fault
// "setup-fail:BENCHMARK@R" (core/fault.h) makes world rank R's setup of `benchmark` fail. A CommunicatorAborted passes through.
void agreed_setup(const Group& group, const std::string& benchmark, const std::function<void()>& setup);

}  // namespace gpuscale
