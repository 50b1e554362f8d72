// The schema's migrations (schema_migrations.h). Types are those both databases know: TEXT, INTEGER,
// DOUBLE PRECISION (REAL affinity in SQLite).
#include "history/schema_migrations.h"

namespace gpuscale::history {

const std::vector<std::vector<std::string>>& migrations() {
  static const std::vector<std::vector<std::string>> list = {
      // 1: runs, their rows, each rank's value, outliers and GPU health verdicts.
      {"CREATE TABLE runs (id TEXT PRIMARY KEY, created_utc TEXT NOT NULL, finished_utc TEXT,"
       " cluster TEXT NOT NULL, backend TEXT, tool_version TEXT, slurm_job_id TEXT, file_version INTEGER,"
       " hosts TEXT NOT NULL, software TEXT NOT NULL, environment TEXT NOT NULL, source TEXT, added_utc TEXT)",
       "CREATE TABLE run_rows (run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, row_index INTEGER NOT NULL,"
       " benchmark TEXT NOT NULL, scope TEXT NOT NULL, params TEXT NOT NULL, gpu_count INTEGER NOT NULL, unit TEXT NOT NULL,"
       " value DOUBLE PRECISION, noise_down DOUBLE PRECISION NOT NULL, noise_up DOUBLE PRECISION NOT NULL,"
       " reps INTEGER NOT NULL, status TEXT NOT NULL, PRIMARY KEY (run_id, row_index))",
       "CREATE TABLE rank_values (run_id TEXT NOT NULL, row_index INTEGER NOT NULL, rank INTEGER NOT NULL,"
       " host TEXT NOT NULL, device INTEGER NOT NULL, gpu TEXT NOT NULL, value DOUBLE PRECISION, valid INTEGER NOT NULL,"
       " noise_down DOUBLE PRECISION NOT NULL, noise_up DOUBLE PRECISION NOT NULL, reps INTEGER NOT NULL,"
       " PRIMARY KEY (run_id, row_index, rank),"
       " FOREIGN KEY (run_id, row_index) REFERENCES run_rows(run_id, row_index) ON DELETE CASCADE)",
       "CREATE TABLE outliers (run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, idx INTEGER NOT NULL,"
       " hosts TEXT NOT NULL, detail TEXT NOT NULL, PRIMARY KEY (run_id, idx))",
       "CREATE TABLE health (run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, idx INTEGER NOT NULL,"
       " rank INTEGER NOT NULL, host TEXT NOT NULL, gpu TEXT NOT NULL, verdict TEXT NOT NULL, line TEXT NOT NULL,"
       " PRIMARY KEY (run_id, idx))",
       // The queries: runs of a cluster over time, a row's series, a host's or a GPU's values.
       "CREATE INDEX runs_cluster_time ON runs (cluster, created_utc)",
       "CREATE INDEX rows_series ON run_rows (benchmark, params, gpu_count)",
       "CREATE INDEX rank_values_host ON rank_values (host)",
       "CREATE INDEX rank_values_gpu ON rank_values (gpu)"},
      // 2: the other row fields the row-field table marks for the history (results/row_fields.h), one
      // line per row and field, so that a new field needs no new migration.
      {"CREATE TABLE row_fields (run_id TEXT NOT NULL, row_index INTEGER NOT NULL, field TEXT NOT NULL,"
       " value DOUBLE PRECISION NOT NULL, PRIMARY KEY (run_id, row_index, field),"
       " FOREIGN KEY (run_id, row_index) REFERENCES run_rows(run_id, row_index) ON DELETE CASCADE)"},
      // 3: the links and NICs of the rows' pair matrices (history/matrix_members.h), each judged against
      // its own past by `history members`. Runs stored before it have none (their GPUs and nodes are in
      // rank_values).
      {"CREATE TABLE member_values (run_id TEXT NOT NULL, row_index INTEGER NOT NULL, kind TEXT NOT NULL,"
       " member TEXT NOT NULL, host TEXT NOT NULL, value DOUBLE PRECISION NOT NULL, noise_down DOUBLE PRECISION NOT NULL,"
       " noise_up DOUBLE PRECISION NOT NULL, reps INTEGER NOT NULL, PRIMARY KEY (run_id, row_index, kind, member),"
       " FOREIGN KEY (run_id, row_index) REFERENCES run_rows(run_id, row_index) ON DELETE CASCADE)"},
  };
  return list;
}

}  // namespace gpuscale::history
