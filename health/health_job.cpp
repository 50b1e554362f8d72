#include "health/health_job.h"

#include <algorithm>
#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "gpuscale_version.h"
#include "core/utc_time.h"
#include "health/consistency.h"

namespace gpuscale::health {
namespace {

int rank_of(int code) {  // higher is worse
  switch (code) {
    case 0: return 0;  // PASS
    case 1: return 1;  // WARN
    case 3: return 2;  // no GPU
    case 2: return 3;  // FAIL
    default: return 4;  // could not check (5), or anything unexpected
  }
}

std::string verdict_of(int code) {
  switch (code) {
    case 0: return "PASS";
    case 1: return "WARN";
    case 2: return "FAIL";
    case 3: return "NO_GPU";
    default: return "NOT_CHECKED";
  }
}

// One unit per GPU of every node, for the cross-node comparison.
std::vector<UnitFacts> gpu_facts(const std::vector<nlohmann::json>& nodes) {
  std::vector<UnitFacts> out;
  for (const auto& n : nodes) {
    const auto sw = n.value("software", nlohmann::json::object());
    for (const auto& g : n.value("gpus", nlohmann::json::array())) {
      const auto& id = g["identity"];
      UnitFacts u;
      u.unit = g.value("index", 0);
      u.host = n.value("host", std::string());
      u.fields["driver_version"] = sw.value("driver", nlohmann::json(nullptr));
      u.fields["cuda_driver"] = sw.value("driver_cuda", nlohmann::json(nullptr));
      u.fields["cuda_runtime"] = sw.value("runtime_cuda", nlohmann::json(nullptr));
      u.fields["nccl"] = sw.value("nccl", nlohmann::json(nullptr));
      u.fields["device_model"] = id.value("name", nlohmann::json(nullptr));
      for (const char* k : {"power_limit_w", "max_sm_clock_mhz", "max_memory_clock_mhz", "ecc_enabled"})
        u.fields[k] = id.value(k, nlohmann::json(nullptr));
      out.push_back(std::move(u));
    }
  }
  return out;
}

}  // namespace

int worst_exit_code(const std::vector<int>& codes) {
  int worst = 0;
  for (int c : codes)
    if (rank_of(c) > rank_of(worst)) worst = c;
  return worst;
}

nlohmann::json failed_node_report(const std::string& host, const std::string& error) {
  return {{"host", host},
          {"node_name", host.substr(0, host.find('.'))},
          {"exit_code", 5},
          {"verdict", "NOT_CHECKED"},
          {"reason", "the check could not run: " + error},
          {"gpus", nlohmann::json::array()},
          {"consistency", nlohmann::json::array()},
          {"drain_command", nullptr},
          {"lines", {fmt::format("node {}: not checked: {}", host, error)}}};
}

JobHealth combine_node_reports(const std::vector<nlohmann::json>& nodes, const Thresholds& t) {
  JobHealth job;
  std::vector<int> codes;
  const bool many = nodes.size() > 1;
  for (const auto& n : nodes) {
    codes.push_back(n.value("exit_code", 5));
    for (const auto& line : n.value("lines", nlohmann::json::array()))
      job.lines.push_back(many ? fmt::format("{}: {}", n.value("host", std::string("?")), line.get<std::string>())
                               : line.get<std::string>());
    if (n.contains("drain_command") && n["drain_command"].is_string()) job.drain.push_back(n["drain_command"]);
  }
  nlohmann::json consistency = nlohmann::json::array();
  if (many && t.consistency != Severity::pass) {
    for (const auto& inc : find_inconsistencies(gpu_facts(nodes))) {
      auto j = to_json(inc, "GPU");
      j["severity"] = severity_name(t.consistency);
      job.lines.push_back(fmt::format("nodes differ: {}: {}", severity_name(t.consistency), j["message"].get<std::string>()));
      consistency.push_back(std::move(j));
    }
    if (!consistency.empty()) codes.push_back(static_cast<int>(t.consistency));
  }
  job.exit_code = worst_exit_code(codes);
  job.doc = {{"schema", "gpuscale.health"},
             {"schema_version", 1},
             {"tool", {{"name", "gpuscale"}, {"version", GPUSCALE_VERSION}, {"commit", GPUSCALE_GIT_COMMIT}}},
             {"created_utc", utc_timestamp(std::chrono::system_clock::now())},
             {"exit_code", job.exit_code},
             {"verdict", verdict_of(job.exit_code)},
             {"nodes", nodes},
             {"consistency", consistency},
             {"drain_commands", job.drain}};
  return job;
}

}  // namespace gpuscale::health
