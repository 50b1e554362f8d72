#pragma once
// `gpuscale health` over a whole job: launched by srun or mpirun (e.g. slurm/health.sbatch, one task
// per GPU), the first task on each node checks that node and rank 0 gathers the node reports into one
// document: every GPU's line prefixed with its node, one drain line per failing node, the nodes whose
// driver, CUDA, NCCL, GPU model, power limit, clocks or ECC mode differ from the rest, and one exit code
// for the job. Started alone (no launcher), it is the same document with one node. Pure, unit-tested.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "health/thresholds.h"

namespace gpuscale::health {

struct JobHealth {
  nlohmann::json doc;                // schema health/schema/health-v1.schema.json
  std::vector<std::string> lines;    // one per GPU (or per node without GPUs), for stdout
  std::vector<std::string> drain;    // scontrol lines of the failing nodes
  int exit_code = 0;
};

// The job's code from its nodes': 5 (a node could not check) before 2 (FAIL) before 3 (no GPU)
// before 1 (WARN) before 0 (PASS).
int worst_exit_code(const std::vector<int>& codes);

// `nodes`: each node's report (health/health_check.h report_json). `thresholds` says how severe a
// cross-node difference is.
JobHealth combine_node_reports(const std::vector<nlohmann::json>& nodes, const Thresholds& thresholds);

// A node whose check threw: a report that says so, with exit code 4.
nlohmann::json failed_node_report(const std::string& host, const std::string& error);

}  // namespace gpuscale::health
