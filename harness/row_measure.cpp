#include "harness/row_measure.h"

#include <fmt/format.h>

#include "core/fault.h"
#include "harness/guard/run_guard.h"
#include "harness/measurement_json.h"
#include "harness/row_builder.h"
#include "world/activity.h"

namespace gpuscale {

ResultRow measure_row(const Benchmark& b, const nlohmann::json& params, Group& group, std::unique_ptr<Communicator>& comm_of_group,
                    int k, std::uint64_t seed, const std::optional<double>& single, const RowRun& run) {
  RankMeasurement m;
  if (group.member()) {
    auto window = run.telemetry.watch();  // NVML samples this rank's GPU while it measures
    try {
      Communicator* comm = nullptr;
      if (b.scope() == Scope::collective) {
        if (!comm_of_group) {
          ActivityScope setup(Phase::collective, "creating the communicator");
          comm_of_group = watch_communicator(run.backend.make_communicator(group));
        }
        comm = comm_of_group.get();
      }
      RunContext ctx{run.backend.device(), comm, group, run.opts, seed, &run.backend};
      ActivityScope working(Phase::computing, b.key());
      if (fault_injected("fail:" + b.key())) throw Error("injected failure (GPUSCALE_TEST_FAULT)");
      if (fault_injected(fmt::format("stall:{}@{}", b.key(), run.world.rank()))) {
        ActivityScope stalled(Phase::computing, b.key() + " (injected stall, GPUSCALE_TEST_FAULT)");
        stall_for_test();
      }
      m = b.run(params, ctx);
    } catch (const CommunicatorAborted&) {
      throw;  // the group cannot measure again: the run ends (runner.cpp)
    } catch (const std::exception& e) {
      m = RankMeasurement{};
      m.failed = true;
      m.message = e.what();
    }
    run.telemetry.attach(window, m.metrics);
  }
  const auto gathered = run.world.gather_to_root(group.member() ? measurement_to_json(m).dump() : std::string());
  if (run.world.rank() != 0) return {};
  RowInputs in;
  in.benchmark = b.key();
  in.scope = b.scope();
  in.unit = b.unit();
  in.params = params;
  in.gpu_count = k;
  in.nodes = nodes_spanned(run.topo, k);
  in.topology = topology_label(run.topo, k);
  in.single_rank_value = single;
  in.efficiency = b.efficiency();
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    if (gathered[r].empty()) continue;
    const auto& id = run.ranks[r];
    in.ranks.push_back({static_cast<int>(r), id["host"].get<std::string>(), id["device"]["index"].get<int>(),
                        measurement_from_json(nlohmann::json::parse(gathered[r]))});
  }
  const DeviceInfo& dev = run.backend.device().info();
  in.peak = b.expected_peak(params, PeakContext{dev, run.backend.peaks(), run.links}, in.topology);
  auto row = build_row(in);
  health::flag_throttled(row);  // measurements taken while a GPU was throttled say so
  return row;
}

}  // namespace gpuscale
