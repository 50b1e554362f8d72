#pragma once
// One row of a run: every member rank of the group runs the benchmark point (under telemetry, with
// the test faults of core/fault.h), rank 0 gathers the measurements and builds the result row.
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "harness/benchmark.h"
#include "harness/options.h"
#include "harness/plan.h"
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
  const Topology& topo;
  const LinkPeaks& links;
  const nlohmann::json& ranks;  // rank 0: the result document's rank identities
};

// Measures `params` of `b` on the k ranks of `group`; `comm_of_group` is the group's communicator,
// made here when a collective first needs it. Rank 0 gets the row, other ranks an empty one. A
// CommunicatorAborted passes through (the group cannot measure again); any other error is the rank's
// failed measurement.
ResultRow measure_row(const Benchmark& b, const nlohmann::json& params, Group& group, std::unique_ptr<Communicator>& comm_of_group,
                      int k, std::uint64_t seed, const std::optional<double>& single, const RowRun& run);

}  // namespace gpuscale
