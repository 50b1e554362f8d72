#include "harness/run_metadata.h"

#include <ctime>

#include <fmt/format.h>

extern char** environ;

namespace gpuscale {

std::vector<std::string> process_environment() {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) out.emplace_back(*e);
  return out;
}

std::map<std::string, std::string> allowed_environment(const std::vector<std::string>& env) {
  std::map<std::string, std::string> out;
  for (const auto& kv : env) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    const auto name = kv.substr(0, eq);
    for (const char* prefix : kEnvPrefixes)
      if (name.rfind(prefix, 0) == 0) {
        out[name] = kv.substr(eq + 1);
        break;
      }
  }
  return out;
}

nlohmann::json slurm_info(const std::map<std::string, std::string>& env) {
  auto get = [&](const char* k) -> nlohmann::json {
    auto it = env.find(k);
    return it == env.end() ? nlohmann::json(nullptr) : nlohmann::json(it->second);
  };
  if (env.find("SLURM_JOB_ID") == env.end()) return nullptr;
  // How the ranks were started inside the job: Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE in every
  // rank; srun sets SLURM_STEP_ID (the batch step itself, without srun, has neither).
  const nlohmann::json launcher = env.count("OMPI_COMM_WORLD_SIZE") ? nlohmann::json("mpirun")
                                  : env.count("SLURM_STEP_ID")      ? nlohmann::json("srun")
                                                                    : nlohmann::json(nullptr);
  return {{"job_id", get("SLURM_JOB_ID")},
          {"array_job_id", get("SLURM_ARRAY_JOB_ID")},
          {"array_task_id", get("SLURM_ARRAY_TASK_ID")},
          {"job_name", get("SLURM_JOB_NAME")},
          {"partition", get("SLURM_JOB_PARTITION")},
          {"cluster", get("SLURM_CLUSTER_NAME")},
          {"nodelist", get("SLURM_JOB_NODELIST")},
          {"num_nodes", get("SLURM_JOB_NUM_NODES")},
          {"ntasks", get("SLURM_NTASKS")},
          {"tasks_per_node", get("SLURM_TASKS_PER_NODE")},
          {"gpus_per_node", get("SLURM_GPUS_PER_NODE")},
          {"gpus_per_task", get("SLURM_GPUS_PER_TASK")},
          {"job_gpus", get("SLURM_JOB_GPUS")},
          {"gpus", get("SLURM_GPUS")},
          {"gpus_on_node", get("SLURM_GPUS_ON_NODE")},
          {"ntasks_per_node", get("SLURM_NTASKS_PER_NODE")},
          {"cpus_per_task", get("SLURM_CPUS_PER_TASK")},
          {"launcher", launcher}};
}

ClusterName cluster_name(const std::string& flag, const std::map<std::string, std::string>& env,
                         const std::string& host) {
  if (!flag.empty()) return {flag, "--cluster"};
  if (auto it = env.find("SLURM_CLUSTER_NAME"); it != env.end() && !it->second.empty())
    return {it->second, "SLURM_CLUSTER_NAME"};
  return {host, "hostname"};
}

std::string utc_timestamp(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string default_result_path(const std::string& cluster, std::chrono::system_clock::time_point t,
                                const std::string& job_id) {
  std::string safe;
  for (char ch : cluster) safe += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.') ? ch : '_';
  if (safe.empty() || safe[0] == '.') safe = "cluster" + safe;
  std::string stamp = utc_timestamp(t);
  std::erase(stamp, '-');
  std::erase(stamp, ':');
  return fmt::format("results/{}-{}{}.json", safe, stamp, job_id.empty() ? "" : "-" + job_id);
}

}  // namespace gpuscale
