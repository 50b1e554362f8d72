#pragma once
// The collectives' per-iteration pass (nccl-tests 2.19's -I 1, here always with -z 3's barrier before
// each operation; -K is -K/--skip-iters): after a point's timed repetitions, each rank times `iters`
// operations one by one (CollectiveRunner::time_each), the group reduces them element by element to the
// slowest rank and its time (Group::max_each, MPI_MAXLOC: nothing gathers to one rank), and the row gets
// the summary of that series (core/iter_stats.h). Only in a job of kIterRankSeriesJobRanks ranks or fewer
// does every rank's own series travel too (an allgather of iters x 8 bytes per rank), for the nccl-tests
// export's per_process_max_times_us (iter_rank_series_kept); docs/scale.md counts the bytes.
#include <nlohmann/json.hpp>

#include "collectives/communicator.h"
#include "harness/benchmarks/work_place.h"
#include "world/world.h"

namespace gpuscale {

// Runs the pass and adds its figures to `row_metrics` (iter_* in results/row_fields.cpp). `skip`
// (below `iters`, which the option check holds) leading iterations are left out of the summary;
// `job_ranks`: the world's ranks.
void measure_iterations(CollectiveRunner& runner, const Group& group, const WorkPlace& place, int iters, int skip,
                        int job_ranks, nlohmann::json& row_metrics);

}  // namespace gpuscale
