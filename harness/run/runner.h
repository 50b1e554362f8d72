#pragma once
// The harness's main loop: for every benchmark point and every GPU count k in {1, 2, 4, ..., N} (plus N),
// the ranks are tiled into disjoint groups of k (harness/plan/tiling.h) that measure, each a row's group;
// rank 0 gathers their measurements into result rows, appends each point's rows to the result journal
// as the point ends (so a failure later loses nothing), writes the file whole at the start and the end,
// and prints progress and the summary.
#include "harness/options/options.h"
#include "world/world.h"

namespace gpuscale {

// Runs the whole plan; returns the process exit code (0 all valid, 1 something invalid or failed).
// Throws gpuscale::Error for problems found before measuring (bad options, no device, bad output path).
int run_plan(const RunOptions& opts, World& world);

}  // namespace gpuscale
