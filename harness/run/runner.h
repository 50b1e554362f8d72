#pragma once
// The harness's main loop: for every benchmark point and every GPU count k in {1, 2, 4, ..., N}, the
// first k ranks (packed node by node) measure together; rank 0 gathers their measurements into result
// rows, rewrites the result file after every point (so a failure later loses nothing), and prints
// progress and the summary.
#include "harness/options/options.h"
#include "world/world.h"

namespace gpuscale {

// Runs the whole plan; returns the process exit code (0 all valid, 1 something invalid or failed).
// Throws gpuscale::Error for problems found before measuring (bad options, no device, bad output path).
int run_plan(const RunOptions& opts, World& world);

}  // namespace gpuscale
