#pragma once
// A row's energy from its ranks' metrics["energy"] (RunTelemetry::attach): the GPUs' energy (scope
// "gpu": each GPU's counter once per host, known by its UUID in "counter", so the ranks on MIG slices of
// one GPU, which each read the whole GPU's counter, count it once) or the nodes' (scope "node": RAPL,
// counted once per host, whatever ranks share it). Row metrics set (results/row_fields.cpp):
//   energy_j     the total over the row's GPUs or nodes during the point (null when any is unknown)
//   avg_power_w  the sum of their average powers
//   work_per_j   the row's work per joule: the sum of its groups' figures over avg_power_w, in the
//                row's unit per second made per joule (core/units.h: TFLOP/J, GB/J, tokens/J); only for an ok row
//   energy_scope, energy_invalid (why energy_j is null), energy_shared (the GPUs several ranks shared),
//   energy_window ("timed": read around the timed repetitions; "point": the whole point, setup included)
// and each rank's energy object is cut to its energy_j and avg_power_w (rank metrics), only where known.
// Pure: tests/unit/health/test_row_energy.cpp.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuscale {
struct ResultRow;
}

namespace gpuscale::health {

// Sets the row's energy metrics; leaves a row whose ranks carry no energy as it is.
void add_row_energy(ResultRow& row);

// The run's energy per host (the result file's health.energy, the run summary's line): GPU scope sums
// the host's GPUs, node scope takes one rank's reading per host. `energy`: each rank's EnergyWindow JSON
// over the run (null when it read none).
struct RankEnergy {
  int rank = 0;
  std::string host;
  nlohmann::json energy;
};
nlohmann::json run_energy_by_host(const std::vector<RankEnergy>& ranks);

}  // namespace gpuscale::health
