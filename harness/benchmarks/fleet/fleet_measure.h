#pragma once
// What the fleet benchmarks (fleet_pairs.cpp) share: where the ranks run, one pair's measurement
// through the registry's own collective, the round records of a pass (harness/benchmarks/fleet/pair_cells.h) and the
// matrices as the result file holds them.
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/benchmark.h"
#include "harness/benchmarks/fleet/pair_cells.h"
#include "harness/plan/plan.h"

namespace gpuscale::fleet {

// Where the group's ranks run: the nodes in Topology numbering, and each rank's place on its node.
struct Placement {
  Topology topo;
  std::vector<std::string> node_hosts;   // host of each node
  std::vector<std::vector<int>> ranks;   // world ranks of each node, in local order
};
Placement placement_of(const std::vector<std::string>& hosts);

// One pair's figure as this rank saw it: the collective's busbw, its repetition spread, whether it
// was valid. A failed or wrong pair leaves NaN in the matrix and makes `out` (this rank's measurement)
// wrong, its message naming the pair (`name`).
struct PairResult {
  double value = std::numeric_limits<double>::quiet_NaN(), down = value, up = value;
};
// A pair's communicator, split from the fleet point's (ctx.comm, the whole job's group) with shared
// resources: every member of ctx.group calls open_pair right after making `pair`, together; a rank
// outside the pair gets none. Its creation is timed; an error (other than an abort) is kept for run_pair.
struct PairComm {
  std::unique_ptr<Communicator> comm;
  double init_s = 0;
  std::string error;
};
PairComm open_pair(const Group& pair, RunContext& ctx);
// The pair's measurement on its communicator (members of the pair only).
PairResult run_pair(const Benchmark& inner, const nlohmann::json& params, const Group& pair, PairComm& made,
                    RunContext& ctx, const std::string& name, RankMeasurement& out);

// One record of what this rank measured in a round: `cell` (NaN: nothing), its figures.
void add_record(std::vector<double>& records, double cell, const PairResult& r);

// Every member's records of a pass (the same count on every member), placed: identical on every member.
std::vector<PairCells> gather_cells(const Group& group, const std::vector<double>& mine, std::size_t matrices,
                                    std::size_t m);

// A matrices[] entry of the result file: hosts of its members, their labels and ranks, and its cells.
nlohmann::json matrix_json(const char* kind, const std::vector<std::string>& hosts, const nlohmann::json& labels,
                           const nlohmann::json& ranks, const PairCells& cells);

// The median of the measured cells i < j of an M x M table.
double median_of_pairs(const std::vector<double>& cells, std::size_t m);

}  // namespace gpuscale::fleet
