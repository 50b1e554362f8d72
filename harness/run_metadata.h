#pragma once
// What a result file says about where and how it was measured: cluster, hosts, Slurm job, MPI, software
// versions, command line, and an allow-list of environment variables.
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuscale {

// Environment variables recorded in results: these prefixes only (others may hold secrets).
inline constexpr const char* kEnvPrefixes[] = {"NCCL_", "CUDA_", "SLURM_", "OMPI_", "UCX_", "OMP_"};

// The allow-listed subset of `env` ("NAME=value" strings, as in environ).
std::map<std::string, std::string> allowed_environment(const std::vector<std::string>& env);
std::vector<std::string> process_environment();

// Slurm's view of the job from the environment (job, nodes, tasks, GPUs, and whether srun or mpirun
// started the ranks), or null outside a job.
nlohmann::json slurm_info(const std::map<std::string, std::string>& env);

struct ClusterName {
  std::string name;
  std::string source;  // "--cluster", "SLURM_CLUSTER_NAME" or "hostname"
};
ClusterName cluster_name(const std::string& flag, const std::map<std::string, std::string>& env,
                         const std::string& host);

// 2026-11-29T18:00:00Z
std::string utc_timestamp(std::chrono::system_clock::time_point t);
// results/<cluster>-<YYYYMMDDTHHMMSSZ>[-<jobid>].json, with the cluster name made file-name safe.
std::string default_result_path(const std::string& cluster, std::chrono::system_clock::time_point t,
                                const std::string& job_id);

}  // namespace gpuscale
