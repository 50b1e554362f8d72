#pragma once
// What the history keeps of one result file (docs/history.md, "What is stored"): the run's identity and
// environment, each row's figure with its noise band, each rank's value, the outliers and the GPU
// health verdicts the file has. Built from a file already read and verified by analysis/result_set.h.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/result_set.h"
#include "history/matrix_members.h"

namespace gpuscale::history {

struct RowRecord {
  int index = 0;           // position in the file's results[]
  std::string benchmark;
  std::string scope;       // "independent" or "collective"
  std::string params;      // canonical JSON text of the parameter point (keys sorted, no spaces)
  int gpu_count = 1;
  std::string unit;
  std::optional<double> value;  // the row's figure (aggregate); none when it measured nothing
  double noise_down = 0, noise_up = 0;  // the row's noise band (analysis/noise.h), relative
  int reps = 0;                         // repetitions behind the band (0: unknown)
  std::string status;                   // ok, invalid, failed, skipped
  // Every other row field the table marks for the history (results/row_fields.h: scaling efficiency,
  // fraction of peak, times), by its history name; a field the row lacks is absent.
  std::map<std::string, double> fields;
};

struct RankRecord {
  int row_index = 0, rank = 0, device = 0;
  std::string host;
  std::string gpu;  // the device's UUID (ranks[].device.details.uuid), or "-"
  std::optional<double> value;
  bool valid = true;
  // The rank's own repetition band (--rank-stats files), relative; reps 0: the file kept none.
  double noise_down = 0, noise_up = 0;
  int reps = 0;
};

struct OutlierRecord {
  std::string hosts;   // the outlier's hosts, comma-separated
  std::string detail;  // the outlier record as JSON text
};

struct HealthRecord {
  int rank = 0;
  std::string host, gpu, verdict, line;
};

struct RunRecord {
  std::string id;            // lowercase hex SHA-256 of the file's bytes: the same file is the same run
  std::string created_utc;   // when the run started (ISO 8601, UTC)
  std::string finished_utc;  // empty when the file has none
  std::string cluster, backend, tool_version, slurm_job_id, source;
  int file_version = 0;      // the result file's schema_version
  std::vector<std::string> hosts;
  std::string software;      // JSON object text: {"driver": ..., "nccl": ...}
  std::string environment;   // JSON object text (the file's environment, already free of secrets)
  std::vector<RowRecord> rows;
  std::vector<RankRecord> ranks;
  std::vector<MemberRecord> members;  // the links and NICs of the rows' pair matrices (matrix_members.h)
  std::vector<OutlierRecord> outliers;
  std::vector<HealthRecord> health;
};

// The record of a loaded, verified file whose bytes hashed to `id`.
RunRecord make_run_record(const LoadedResult& loaded, const std::string& id);
// Reads and verifies `path` (every reader's checks) and hashes its bytes. Throws gpuscale::Error (exit 2).
RunRecord read_run_record(const std::string& path);

// Canonical text of a parameter point, as rows store it (and as --params is matched).
std::string canonical_params(const nlohmann::json& params);
// The software map of a run's JSON text: name -> version ("" for null).
std::map<std::string, std::string> software_versions(const std::string& software_json);

}  // namespace gpuscale::history
