#pragma once
// The results history behind one small interface (docs/history.md): SQLite (one file, the default) or
// PostgreSQL (a server many jobs write to at once), chosen by the store URL (store_url.h). Writing a
// run is one transaction; a run is stored once, by its content hash.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "history/run_record.h"

namespace gpuscale::history {

// The newest schema this gpuscale knows; a store at a newer version is refused, its version named.
inline constexpr int kStoreSchemaVersion = 3;
// gpuscale run --store: the run finished and its file is kept, but the store refused it (docs/history.md).
inline constexpr int kExitStoreFailed = 7;

struct RunSummary {
  std::string id, created_utc, cluster, backend, tool_version, slurm_job_id, source;
  std::vector<std::string> hosts;
  std::string software;  // JSON object text
  int rows = 0;
};

// history prune: the runs created before `before` (ISO 8601 text order), of one cluster or all.
struct PruneFilter {
  std::string cluster;  // empty: every cluster
  std::string before;   // required
};

struct RunFilter {
  std::string cluster;  // empty: every cluster
  std::string since;    // empty: every run; else runs created at or after it (ISO 8601 text order)
};

// A row of every run that has it, with what the trend and the regressions need of its run.
struct RowPoint {
  std::string run_id, created_utc, cluster, software;
  std::string benchmark, scope, params, unit, status;
  int gpu_count = 1;
  int row_index = 0;  // its position in the run's file
  std::optional<double> value;
  double noise_down = 0, noise_up = 0;
  int reps = 0;
  std::map<std::string, double> fields;  // the row fields the history stores (results/row_fields.h), by name
};

// One rank's value in a row of a run, with the rank's own band (reps 0: the file kept none; the
// row's band then stands for it).
struct RankPoint {
  RowPoint row;
  std::string host, gpu;  // gpu: the device's UUID, or "-" when the file has none
  int rank = 0;
  std::optional<double> value;
  bool valid = true;
  double noise_down = 0, noise_up = 0;
  int reps = 0;
};

// One link's or NIC's figure in a row of a run (matrix_members.h).
struct MemberPoint {
  RowPoint row;
  std::string kind, member, host;
  double value = 0;
  double noise_down = 0, noise_up = 0;
  int reps = 0;
};

struct RowQuery {
  std::string benchmark;  // empty: every benchmark
  std::string params;     // empty: every parameter point; else canonical JSON text (canonical_params)
  std::string cluster;    // empty: every cluster
  std::string host;       // rank_points only; empty: every host
  std::string gpu;        // rank_points only; empty: every GPU
  std::string since;      // empty: every run; else runs created at or after it (regression_horizon)
};

class HistoryStore {
 public:
  virtual ~HistoryStore() = default;
  virtual int schema_version() = 0;
  // true: stored now; false: a run with its id was already there (nothing changed).
  virtual bool add_run(const RunRecord& run) = 0;
  virtual std::vector<RunSummary> list_runs(const RunFilter& filter) = 0;
  virtual std::vector<RowPoint> row_points(const RowQuery& query) = 0;  // in run time order
  virtual std::vector<RankPoint> rank_points(const RowQuery& query) = 0;
  virtual std::vector<MemberPoint> member_points(const RowQuery& query) = 0;  // query.host, .gpu unused; in run time order
  virtual std::vector<OutlierRecord> outliers(const std::string& run_id) = 0;
  virtual std::vector<HealthRecord> health(const std::string& run_id) = 0;
  // Deletes the runs the filter names with their rows, rank values, outliers and health verdicts, in
  // one transaction; returns how many runs went.
  virtual std::size_t delete_runs(const PruneFilter& filter) = 0;
};

// Opens (and migrates) the store at `url`. create: make the SQLite file when it does not exist (add,
// run --store); the queries refuse a missing file. Errors: gpuscale::Error, exit 2 (malformed URL, not a
// gpuscale store or a damaged one, a newer schema) or 3 (unreachable, no permission).
std::unique_ptr<HistoryStore> open_store(const std::string& url, bool create);

}  // namespace gpuscale::history
