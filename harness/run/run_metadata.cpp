#include "harness/run/run_metadata.h"

#include <cctype>
#include <cstdlib>
#include <ctime>

#include <unistd.h>

#include <fmt/format.h>

#include "core/fault.h"
#include "core/term_text.h"
#include "core/virtualization.h"
#include "gpuscale_version.h"
#include "harness/run/resume.h"
#include "results/result_file.h"

extern char** environ;

namespace gpuscale {

std::vector<std::string> process_environment() {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) out.emplace_back(*e);
  return out;
}

bool secret_like_name(std::string_view name) {
  std::string upper(name);
  for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  for (const char* word : kEnvSecretWords)
    if (upper.find(word) != std::string::npos) return true;
  for (const char* exact : kEnvSecretNames)
    if (name == exact) return true;
  return false;
}

std::map<std::string, std::string> allowed_environment(const std::vector<std::string>& env) {
  std::map<std::string, std::string> out;
  for (const auto& kv : env) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    const auto name = kv.substr(0, eq);
    if (secret_like_name(name)) continue;
    for (const char* prefix : kEnvPrefixes)
      if (name.rfind(prefix, 0) == 0) {
        out[utf8_escaped(name)] = utf8_escaped(kv.substr(eq + 1));  // JSON holds only UTF-8
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

std::string path_component(std::string_view text, std::string_view fallback) {
  std::string safe;
  for (char ch : text) {
    const bool ascii_alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    safe += ascii_alnum || ch == '-' || ch == '_' || ch == '.' ? ch : '_';
  }
  if (safe.empty() || safe[0] == '.') safe = std::string(fallback) + safe;
  return safe;
}

std::string default_result_path(const std::string& cluster, std::chrono::system_clock::time_point t,
                                const std::string& job_id) {
  std::string stamp = utc_timestamp(t);
  std::erase(stamp, '-');
  std::erase(stamp, ':');
  return fmt::format("results/{}-{}{}.json", path_component(cluster, "cluster"), stamp,
                     job_id.empty() ? "" : "-" + path_component(job_id, "job"));
}

nlohmann::json rank_identity(int rank, const std::string& host, int local_rank, const DeviceInfo& d) {
  return {{"rank", rank},
          {"host", host},
          {"virtualization", to_json(classify_virtualization(read_virtualization_evidence()))},  // to hosts[] (hosts_json)
          {"pid", static_cast<long long>(::getpid())},
          {"local_rank", local_rank},
          {"device",
           {{"backend", d.backend},
            {"name", d.name},
            {"index", d.index},
            {"memory_bytes", d.memory_bytes},
            {"free_memory_bytes", d.free_memory_bytes},
            {"details", d.details}}}};
}

nlohmann::json hosts_json(const Topology& topo, const std::vector<std::string>& host_of_rank, nlohmann::json& ranks) {
  nlohmann::json hosts = nlohmann::json::array();
  for (int node = 0; node < topo.nodes; ++node) {
    nlohmann::json h = {{"name", ""}, {"node_index", node}, {"cpu_model", ""}, {"ranks", nlohmann::json::array()}};
    for (std::size_t r = 0; r < topo.node_of_rank.size(); ++r)
      if (topo.node_of_rank[r] == node) {
        if (h["ranks"].empty()) {
          h["name"] = host_of_rank[r];
          const auto& dev = ranks[r]["device"];
          h["cpu_model"] = dev["backend"] == "cpu" ? dev["name"] : dev["details"].value("cpu_model", nlohmann::json(""));
          if (ranks[r].contains("virtualization")) h["virtualization"] = ranks[r]["virtualization"];
        }
        ranks[r].erase("virtualization");
        h["ranks"].push_back(r);
      }
    hosts.push_back(h);
  }
  return hosts;
}

nlohmann::json result_header(const ResultHeader& h) {
  nlohmann::json keys = nlohmann::json::array();  // the benchmarks, in plan order
  for (const auto& p : h.points)
    if (keys.empty() || keys.back() != p["benchmark"]) keys.push_back(p["benchmark"]);
  auto peak_json = [](const ExpectedPeak& p) {
    return nlohmann::json{{"value", p.value ? nlohmann::json(*p.value) : nlohmann::json(nullptr)}, {"source", p.source}};
  };
  const char* fault = std::getenv(kFaultEnv);
  return {{"schema", kResultSchemaName},
          {"schema_version", kResultSchemaVersion},
          {"tool", {{"name", "gpuscale"}, {"version", GPUSCALE_VERSION}, {"commit", GPUSCALE_GIT_COMMIT}}},
          {"created_utc", utc_timestamp(h.started)},
          {"finished_utc", nullptr},
          {"cluster", {{"name", h.cluster.name}, {"source", h.cluster.source}}},
          {"backend", h.backend},
          {"command_line", h.command_line},
          {"environment", h.environment},
          {"test_fault", fault ? nlohmann::json(fault) : nlohmann::json(nullptr)},
          {"slurm", h.slurm},
          {"mpi", {{"library", h.mpi_library}, {"world_size", h.world_size}}},
          {"software", h.software},
          {"hosts", nlohmann::json::array()},
          {"ranks", nlohmann::json::array()},
          {"links", {{"intra_node", peak_json(h.links.intra_node)}, {"inter_node", peak_json(h.links.inter_node)}}},
          {"plan",
           {{"gpu_counts", h.gpu_counts},
            {"benchmarks", keys},
            {"points", h.points.size()},
            {"seed", h.seed},
            {"options", h.options},
            {"point_list", point_list(nlohmann::json{{"points", h.points}})}}},
          {"results", nlohmann::json::array()},
          {"summary", h.summary}};
}

}  // namespace gpuscale
