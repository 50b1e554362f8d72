#include "harness/benchmarks/train_step/train_step_measure.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "backends/backend.h"
#include "core/fault.h"
#include "core/stats.h"
#include "harness/benchmarks/agreed_setup.h"
#include "harness/benchmarks/comm_timing.h"
#include "harness/benchmarks/watched_communicator.h"
#include "harness/benchmarks/work_place.h"

namespace gpuscale {
namespace {

CollectiveCase step_case(const TrainComm& c, DType dtype, std::uint64_t seed) {
  CollectiveCase cc;
  cc.coll = c.coll;
  cc.dtype = dtype;
  cc.size_bytes = c.bytes;
  cc.skew = AlltoallvSkew{c.skew, {}};
  cc.seed = seed;
  return cc;
}

}  // namespace

std::size_t StepComms::dim_of(const TrainComm& c) const {
  return static_cast<std::size_t>(std::find(kTrainDims.begin(), kTrainDims.end(), c.group) - kTrainDims.begin());
}

StepComms open_step_comms(const ParallelLayout& l, RunContext& ctx) {
  StepComms s;
  for (std::size_t d = 0; d < kTrainDims.size(); ++d) {
    if (layout_group_size(l, kTrainDims[d]) < 2) continue;
    s.groups[d] = std::make_unique<Group>(ctx.group, layout_colour(l, ctx.group.rank(), kTrainDims[d]),
                                          layout_group_rank(l, ctx.group.rank(), kTrainDims[d]));
    // Split from the GPU count's communicator (every member of ctx.group is in one group of each dimension).
    double seconds = 0;
    s.comms[d] = watch_communicator(
        timed_communicator([&] { return ctx.backend->make_communicator(*s.groups[d], ctx.comm); }, &seconds));
    s.init_s += seconds;
    s.places[d] = comm_work_place(*s.groups[d], ctx.hosts);
  }
  return s;
}

std::optional<std::string> unsupported_step_collective(const TrainStepPlan& plan, const StepComms& comms, DType dtype,
                                                       RunContext& ctx) {
  std::string unsupported;
  for (const auto& c : plan.comms)
    if (auto why = comms.comms[comms.dim_of(c)]->unsupported(step_case(c, dtype, ctx.seed)); why && unsupported.empty())
      unsupported = c.what + ": " + *why;
  if (const int r = ctx.group.first_failed(!unsupported.empty()); r >= 0)
    return unsupported.empty() ? fmt::format("a collective of the step is not supported on world rank {}", r) : unsupported;
  return std::nullopt;
}

StepWork prepare_step(const TrainStepPlan& plan, const StepComms& comms, DType dtype, RunContext& ctx,
                      const std::string& benchmark) {
  StepWork w;
  agreed_setup(ctx.group, benchmark, [&] {
    for (std::size_t i = 0; i < plan.gemms.size(); ++i) w.gemms.push_back(ctx.device.make_gemm(dtype, plan.gemms[i].shape, ctx.seed + i));
    for (const auto& c : plan.comms) w.runners.push_back(comms.comms[comms.dim_of(c)]->prepare(step_case(c, dtype, ctx.seed)));
  });
  return w;
}

double run_step(const TrainStepPlan& plan, StepWork& work, const StepComms& comms, Device& device, const WorkPlace& mine,
                std::array<double, kTrainPhases>& phase) {
  const double t0 = device.clock_s();
  for (const auto& op : plan.program) {
    double t = 0;
    if (op.gemm) {
      const FaultScope planted(mine);  // a planted slow GPU spends its time in the GEMMs
      t = work.gemms[static_cast<std::size_t>(op.index)]->run_one();  // once, as the program says
      t += spend_planted(FaultSite::compute, t);
    } else {
      const auto& c = plan.comms[static_cast<std::size_t>(op.index)];
      const FaultScope planted(comms.places[comms.dim_of(c)]);  // a NIC or link fault acts on the traffic crossing it
      t = work.runners[static_cast<std::size_t>(op.index)]->time(1);
    }
    phase[static_cast<std::size_t>(op.phase)] += t;
  }
  return device.clock_s() - t0;
}

StepTimes time_steps(const TrainStepPlan& plan, StepWork& work, const StepComms& comms, RunContext& ctx,
                     const DpMethodology& m) {
  const int n = ctx.group.size();
  const WorkPlace mine = comm_work_place(ctx.group, ctx.hosts);
  auto step = [&](std::array<double, kTrainPhases>& phase) {
    ctx.group.barrier();
    return run_step(plan, work, comms, ctx.device, mine, phase);
  };
  for (int i = 0; i < m.warmup; ++i) {
    std::array<double, kTrainPhases> ignored{};
    step(ignored);
  }
  StepTimes out;
  for (int r = 0; r < m.reps; ++r) {
    std::array<double, kTrainPhases> phase{};
    const double s = stretch_timed(step(phase));
    out.mine_rate.push_back(plan.tokens_per_step / n / s);
    out.mine_step.push_back(s);
    // The group's step is its slowest rank's, and so are the phases it reports: each rank's step and
    // phases gathered, that rank's kept, its time outside the phases its wait.
    std::vector<double> mine_v = {s};
    mine_v.insert(mine_v.end(), phase.begin(), phase.end());
    const auto all = ctx.group.allgather(mine_v);
    const std::size_t w = mine_v.size();
    std::size_t slow = 0;
    for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k)
      if (all[k * w] > all[slow * w]) slow = k;
    out.group_step.push_back(all[slow * w]);
    double busy = 0;
    for (std::size_t p = 0; p < static_cast<std::size_t>(kTrainPhases); ++p) {
      out.slowest_phase[p].push_back(all[slow * w + 1 + p]);
      busy += all[slow * w + 1 + p];
    }
    out.slowest_phase[kTrainPhases].push_back(std::max(0.0, all[slow * w] - busy));
  }
  return out;
}

StepCheck verify_step(const TrainStepPlan& plan, StepWork& work, const Group& group) {
  StepCheck out;
  // In program order, each distinct GEMM and collective once.
  std::vector<bool> done(plan.gemms.size() + plan.comms.size(), false);
  for (const auto& op : plan.program) {
    const std::size_t at = op.gemm ? static_cast<std::size_t>(op.index) : plan.gemms.size() + static_cast<std::size_t>(op.index);
    if (done[at]) continue;
    done[at] = true;
    if (op.gemm) {
      const auto r = work.gemms[static_cast<std::size_t>(op.index)]->verify();
      out.wrong += r.wrong;
      out.checked += r.checked;
    } else {
      out.wrong += work.runners[static_cast<std::size_t>(op.index)]->check();
      ++out.checked;
    }
  }
  const auto wrong_all = group.allgather(static_cast<double>(out.wrong));
  out.wrong_total = std::accumulate(wrong_all.begin(), wrong_all.end(), 0.0);
  return out;
}

nlohmann::json step_row_metrics(const TrainStepPlan& plan, const StepTimes& times, const TrainFigures& f,
                                double memory_bytes, double wrong_total) {
  nlohmann::json phases = nlohmann::json::object();
  for (std::size_t p = 0; p < static_cast<std::size_t>(kTrainPhases); ++p)
    phases[std::string(train_phase_name(static_cast<TrainPhase>(p)))] = median_of(times.slowest_phase[p]) * 1e6;
  phases["wait"] = median_of(times.slowest_phase[kTrainPhases]) * 1e6;
  phases["bubble"] = f.bubble_s * 1e6;
  const ParallelLayout& l = plan.layout;
  return {{"tokens_per_s", f.tokens_per_s},
          {"tokens_per_s_per_gpu", f.tokens_per_s_per_gpu},
          {"model_tflops_per_gpu", f.model_tflops_per_gpu},
          {"step_time_us", f.step_s * 1e6},
          {"measured_step_us", median_of(times.group_step) * 1e6},
          {"phase_us", phases},
          {"layout", {{"dp", l.dp}, {"fsdp", l.fsdp}, {"tp", l.tp}, {"pp", l.pp}, {"ep", l.ep}}},
          {"micro_batches", plan.micro_batches},
          {"tokens_per_step", plan.tokens_per_step},
          {"flops_per_token", train_flops_per_token(plan.model)},
          {"model_memory_bytes_per_gpu", memory_bytes},
          {"time_reduce", "slowest rank"},
          {"wrong", wrong_total}};
}

}  // namespace gpuscale
