#pragma once
// What a result file says about where and how it was measured: cluster, hosts, Slurm job, MPI, software
// versions, command line, and an allow-list of environment variables.
#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/utc_time.h"  // utc_timestamp, for the callers of this header
#include "harness/plan/plan.h"
#include "kernels/device.h"
#include "peaks/peaks.h"

namespace gpuscale {

// Environment variables recorded in results: these prefixes only (others may hold secrets), less any
// name that looks like a secret (kEnvSecretWords, case-insensitive, anywhere in the name: SLURM_JWT is
// Slurm's REST token, *_TOKEN / *_PASSWORD may sit under an allowed prefix) and kEnvSecretNames.
inline constexpr const char* kEnvPrefixes[] = {"NCCL_", "CUDA_", "SLURM_", "OMPI_", "UCX_", "OMP_"};
inline constexpr const char* kEnvSecretWords[] = {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "JWT", "KEY", "CREDENTIAL", "COOKIE"};
// Open MPI's job key: a shared secret between the job's processes.
inline constexpr const char* kEnvSecretNames[] = {"OMPI_MCA_orte_precondition_transports"};

// Whether an environment variable's name looks like it holds a secret (never recorded).
bool secret_like_name(std::string_view name);

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

// `text` reduced to a safe file-name part: every character outside [A-Za-z0-9._-] becomes '_', and a
// leading '.' (or nothing) gets `fallback` before it, so no part is empty, hidden, "." or "..".
std::string path_component(std::string_view text, std::string_view fallback);
// results/<cluster>-<YYYYMMDDTHHMMSSZ>[-<jobid>].json, the cluster name and job id made file-name safe
// (path_component: a SLURM_JOB_ID of "x/../../tmp/evil" stays one name inside results/).
std::string default_result_path(const std::string& cluster, std::chrono::system_clock::time_point t,
                                const std::string& job_id);

// One rank as the result file's `ranks` lists it: rank, host, pid, local rank and its device.
nlohmann::json rank_identity(int rank, const std::string& host, int local_rank, const DeviceInfo& device);

// The result file's `hosts`: one entry per node of `topo`, with its ranks and CPU model (from `ranks`,
// the document's rank identities; `hosts` is the host of every rank).
// A host's virtualisation (core/virtualization.h), read by each rank, is moved from its ranks' entries
// to the host's: written once per host.
nlohmann::json hosts_json(const Topology& topo, const std::vector<std::string>& hosts, nlohmann::json& ranks);

// Everything the result document says before its first row.
struct ResultHeader {
  std::chrono::system_clock::time_point started;
  ClusterName cluster;
  nlohmann::json slurm;                       // slurm_info()
  std::map<std::string, std::string> environment;
  std::string backend;
  std::vector<std::string> command_line;
  std::string mpi_library;
  int world_size = 1;
  nlohmann::json software;                    // the backend's software versions
  LinkPeaks links;
  nlohmann::json points;                      // the plan's points ({benchmark, params})
  std::vector<int> gpu_counts;
  std::uint64_t seed = 0;
  nlohmann::json options;                     // plan.options (harness/run/resume.h)
  nlohmann::json summary;                     // the summary of a run with no rows yet
};

// The result document before any row (docs/results.md): schema, tool, cluster, environment, MPI,
// software, links and plan; `hosts`, `ranks` and `results` are empty arrays for the runner to fill.
nlohmann::json result_header(const ResultHeader& h);

}  // namespace gpuscale
