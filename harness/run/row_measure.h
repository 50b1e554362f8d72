#pragma once
// One row of a run: every member rank of the group runs the benchmark point (under telemetry, with
// the test faults of core/fault.h), rank 0 gathers the measurements and builds the result row.
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "harness/benchmark.h"
#include "harness/options/options.h"
#include "harness/plan/plan.h"
#include "harness/plan/tiling.h"
#include "health/run_telemetry.h"
#include "results/result_file.h"
#include "world/world.h"

namespace gpuscale {

// What measuring a row takes from the run.
struct RowRun {
  World& world;
  Backend& backend;
  health::RunTelemetry& telemetry;
  const RunOptions& opts;
  const LinkPeaks& links;
  const nlohmann::json& ranks;  // rank 0: the result document's rank identities
};

// One GPU count of the run on this rank: how the ranks are tiled into groups (harness/plan/tiling.h), when
// each group measures, and this rank's own group and its communicator.
struct CountGroups {
  Tiling tiling;
  std::vector<std::vector<int>> rounds;  // tiling_rounds(tiling)
  int mine = -1;                         // this rank's group index, or -1 when it is idle at this count
  std::unique_ptr<Group> group;          // this rank's group (not a member when idle)
  std::unique_ptr<Communicator> comm;    // the group's communicator, made at the count's first row that needs one
  bool comm_made = false;                // this rank took part in making it (an idle rank holds none)
};

// Which rows run on their GPU count's communicator, [point][count] (harness/plan/plan.h's
// last_communicator_rows): a collective-scope point, measured at that count (the fleet benchmarks at the
// whole job only), not kept from a resumed file (`kept`, by point).
std::vector<std::vector<bool>> rows_on_communicators(const nlohmann::json& points, const std::vector<bool>& kept,
                                                     const std::vector<int>& counts, int world_size);

// Frees the count's communicator after its last row that needs one (harness/plan/plan.h's
// last_communicator_rows); every rank calls it.
void free_count_communicator(CountGroups& count);

// The groups of GPU count k on this rank; every rank calls it (one MPI_Comm_split).
CountGroups make_count_groups(const World& world, int k, TilingMode mode);

// Measures `params` of `b` on every group of `count`, round after round. Rank 0 gets the row (the
// median group's figure with every group kept, harness/rows/row_groups.h), other ranks an empty one. A
// CommunicatorAborted passes through (the group cannot measure again); any other error is the rank's
// failed measurement.
ResultRow measure_row(const Benchmark& b, const nlohmann::json& params, CountGroups& count, std::uint64_t seed,
                      const std::optional<double>& single, const RowRun& run);

}  // namespace gpuscale
