#pragma once
// train-step's measurement on one rank, by job (harness/benchmarks/train_step/train_step.cpp plans the points,
// refuses what cannot run, and calls these in order): the communicators of the layout's groups, the
// step's GEMMs and collectives prepared, the timed steps, their check, and the row's figures. Every
// function that takes the group is collective: each member calls it, in the same order.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/fault_plan.h"
#include "harness/benchmark.h"
#include "harness/benchmarks/defaults.h"
#include "training/train_step_plan.h"

namespace gpuscale {

// The layout's dimensions, in the order every member makes their groups and communicators.
inline constexpr std::array<LayoutDim, 6> kTrainDims = {LayoutDim::tp, LayoutDim::fsdp, LayoutDim::dp,
                                                        LayoutDim::ep, LayoutDim::expert_dp, LayoutDim::pp};

// One group, communicator and work place (where a planted fault acts) per dimension of more than one
// rank; none for the others (no collective of the plan runs there).
struct StepComms {
  std::array<std::unique_ptr<Group>, kTrainDims.size()> groups;
  std::array<std::unique_ptr<Communicator>, kTrainDims.size()> comms;
  std::array<WorkPlace, kTrainDims.size()> places;
  double init_s = 0;  // seconds this rank spent making the communicators (splits of the GPU count's)
  std::size_t dim_of(const TrainComm& c) const;  // the index of c's dimension
};
StepComms open_step_comms(const ParallelLayout& l, RunContext& ctx);

// Why a collective of the step cannot run (nullopt when every member can run them all): this rank's
// first unsupported collective, or the first member that has one. Asked of every member at once, so
// that all skip the point together.
std::optional<std::string> unsupported_step_collective(const TrainStepPlan& plan, const StepComms& comms, DType dtype,
                                                       RunContext& ctx);

// The step's distinct GEMMs and collectives, ready to run (plan.gemms' and plan.comms' order).
struct StepWork {
  std::vector<std::unique_ptr<GemmProblem>> gemms;
  std::vector<std::unique_ptr<CollectiveRunner>> runners;
};
StepWork prepare_step(const TrainStepPlan& plan, const StepComms& comms, DType dtype, RunContext& ctx,
                      const std::string& benchmark);

// One step of this rank's program, after the group's barrier: each GEMM run once and each collective
// once, in order, each op's seconds added to its phase. The step's seconds come from the device's clock
// (Device::clock_s, its work finished), so they count exactly the work the program names.
double run_step(const TrainStepPlan& plan, StepWork& work, const StepComms& comms, Device& device, const WorkPlace& mine,
                std::array<double, kTrainPhases>& phase);

// The timed steps: this rank's tokens/s per GPU and step time per repetition, the group's step (its
// slowest rank's) and that rank's time in each phase, then its wait (the step less its phases).
struct StepTimes {
  std::vector<double> mine_rate, mine_step, group_step;
  std::array<std::vector<double>, kTrainPhases + 1> slowest_phase;
};
StepTimes time_steps(const TrainStepPlan& plan, StepWork& work, const StepComms& comms, RunContext& ctx,
                     const DpMethodology& m);

// The step verified once, untimed: every GEMM's sampled entries and every collective's result. This
// rank's wrong and checked values, and the wrong ones of the whole group.
struct StepCheck {
  std::uint64_t wrong = 0, checked = 0;
  double wrong_total = 0;
};
StepCheck verify_step(const TrainStepPlan& plan, StepWork& work, const Group& group);

// The row's figures (identical on every member): tokens/s, MFU's numerator, the step and each phase's
// time on the slowest rank, the layout and the model's size, the group's wrong values.
nlohmann::json step_row_metrics(const TrainStepPlan& plan, const StepTimes& times, const TrainFigures& f,
                                double memory_bytes, double wrong_total);

}  // namespace gpuscale
