#pragma once
// No plan allocates more than a rank has: before anything is measured, every planned point's memory
// (Benchmark::demand, at the largest group) is set against what the rank's device has free, and a
// point that does not fit stops the run with the numbers in one line. The CUDA backend still checks
// each allocation as it makes it; this check refuses the plan before an hour of measuring hits it.
// Pure functions of plain data, unit-tested with 2^31+ element buffers and 96 GiB GEMMs.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/benchmark.h"

namespace gpuscale {

// What one rank may allocate: the device's rule (DeviceInfo::usable_memory_bytes): on CUDA the GPU's
// free memory less the headroom kept for the CUDA context and libraries; on the CPU its share of the
// host's available memory (MemAvailable divided among the ranks on the node).
struct MemoryBudget {
  std::uint64_t usable = 0;
  std::string described;  // "GPU 0 (NVIDIA H200) has 139.50 GiB (...) free, 0.25 GiB kept for ..."
};
MemoryBudget memory_budget(const DeviceInfo& device);

struct PlannedDemand {
  std::string point;  // "gemm fp64 65536x65536x65536 NN"
  PointDemand demand;
  // GPU counts whose communicator may be alive while the point is measured (count_communicators_alive,
  // harness/plan/plan.h); with the point's own (PointDemand::communicators) they are split from the job's.
  int count_communicators = 0;
};
// The device memory the communicators alive during a point hold per rank: none when it has none, else
// the job's first communicator and each split one (saturating).
std::uint64_t communicator_bytes(const PlannedDemand& p, const CommunicatorMemory& comms);
// The refusal for the first point that does not fit (one line with the numbers), or nullopt. A point
// needs its own memory and that of the communicators alive during it: usable memory is measured when
// the device opens, before any communicator exists.
std::optional<std::string> memory_refusal(const std::vector<PlannedDemand>& points, const MemoryBudget& budget,
                                          const CommunicatorMemory& comms = {});

// Every point of a plan ({"points": [{"benchmark", "params"}...]}) through its benchmark's demand.
// Throws gpuscale::Error naming a benchmark this build does not have.
std::vector<PlannedDemand> plan_demands(const nlohmann::json& plan, const DemandContext& ctx);

// The run's check: throws gpuscale::Error (exit code 2) when a point does not fit. `count_comms`: each
// point's count_communicators (missing ones 0); `comms`: the backend's communicator_memory().
void check_plan_memory(const nlohmann::json& plan, const DemandContext& ctx, const DeviceInfo& device,
                       const std::vector<int>& count_comms = {}, const CommunicatorMemory& comms = {});

}  // namespace gpuscale
