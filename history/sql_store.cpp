// HistoryStore over a SqlConnection: the statements, written once for SQLite and PostgreSQL
// (history_store.h). Migrations run on open; a run is written in one transaction.
#include <charconv>
#include <chrono>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "core/utc_time.h"
#include "history/history_store.h"
#include "history/schema_migrations.h"
#include "history/sql_connection.h"

namespace gpuscale::history {
namespace {

SqlValue text(const std::string& s) { return s; }
SqlValue number(long long v) { return std::to_string(v); }
SqlValue real(std::optional<double> v) { return v ? SqlValue(fmt::format("{}", *v)) : std::nullopt; }
std::string str(const SqlValue& v) { return v.value_or(""); }
int to_int(const SqlValue& v) { return v ? std::stoi(*v) : 0; }
// Not std::stod: strtod flags a subnormal (5e-324, which a result file may hold) as out of range, and
// stod threw on every later read of the store. from_chars reads back exactly what real() wrote.
std::optional<double> to_real(const SqlValue& v) {
  if (!v) return std::nullopt;
  double d = 0;
  const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), d);
  if (ec != std::errc() || end != v->data() + v->size())
    throw Error(fmt::format("history store: the stored value '{}' is not a number (a damaged store?)", terminal_safe(*v)));
  return d;
}

std::string join(const std::vector<std::string>& v) {
  nlohmann::json j = v;
  return j.dump();
}

// Test faults (tests/e2e/e2e_history.py), inside the transaction after the run's first row:
// GPUSCALE_TEST_FAULT=store-pause: the writer says so and waits to be killed (the killed-writer test);
// store-slow: it holds its transaction 100 ms, so concurrent writers certainly overlap.
void pause_for_test() {
  const char* fault = std::getenv("GPUSCALE_TEST_FAULT");
  if (!fault) return;
  if (std::string_view(fault).find("store-slow") != std::string_view::npos)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (std::string_view(fault).find("store-pause") == std::string_view::npos) return;
  std::fprintf(stderr, "gpuscale: test fault store-pause: paused inside the store transaction\n");
  std::fflush(stderr);
  std::this_thread::sleep_for(std::chrono::seconds(120));
}

// Rows in statements of at most this many rows each (well under SQLite's 32766 parameters).
constexpr std::size_t kBatch = 100;

// INSERT of many rows: `head` is "INSERT INTO t (a, b) VALUES ", `width` the columns per row.
void insert_batched(SqlConnection& db, const std::string& head, std::size_t width,
                    const std::vector<std::vector<SqlValue>>& rows) {
  for (std::size_t start = 0; start < rows.size(); start += kBatch) {
    std::string sql = head;
    std::vector<SqlValue> params;
    for (std::size_t r = start; r < std::min(rows.size(), start + kBatch); ++r) {
      sql += r == start ? "(" : ", (";
      for (std::size_t c = 0; c < width; ++c) {
        params.push_back(rows[r][c]);
        sql += fmt::format("{}${}", c ? ", " : "", params.size());
      }
      sql += ")";
    }
    db.exec(sql, params);
  }
}

// A transaction rolled back unless committed (an error on the way leaves the store as it was).
class Transaction {
 public:
  explicit Transaction(SqlConnection& db) : db_(db) {}
  ~Transaction() {
    if (!done_) try {
        db_.exec("ROLLBACK", {});
      } catch (...) {
      }
  }
  void commit() {
    db_.exec("COMMIT", {});
    done_ = true;
  }
  void rollback() {
    db_.exec("ROLLBACK", {});
    done_ = true;
  }

 private:
  SqlConnection& db_;
  bool done_ = false;
};

// WHERE clause of a row query, its parameters appended to `params`.
std::string row_where(const RowQuery& q, std::vector<SqlValue>& params, bool ranks) {
  std::string w = " WHERE 1 = 1";
  auto add = [&](const char* column, const std::string& v) {
    if (v.empty()) return;
    params.push_back(v);
    w += fmt::format(" AND {} = ${}", column, params.size());
  };
  add("r.benchmark", q.benchmark);
  add("r.params", q.params);
  add("u.cluster", q.cluster);
  if (!q.since.empty()) {
    params.push_back(q.since);
    w += fmt::format(" AND u.created_utc >= ${}", params.size());
  }
  if (ranks) {
    add("k.host", q.host);
    add("k.gpu", q.gpu);
  }
  return w;
}

constexpr const char* kRowColumns =
    "u.id, u.created_utc, u.cluster, u.software, r.benchmark, r.params, r.unit, r.status, r.gpu_count, r.value,"
    " r.noise_down, r.noise_up, r.reps, r.scope, r.row_index";

RowPoint row_point(const SqlRow& s) {
  RowPoint p;
  p.run_id = str(s[0]);
  p.created_utc = str(s[1]);
  p.cluster = str(s[2]);
  p.software = str(s[3]);
  p.benchmark = str(s[4]);
  p.params = str(s[5]);
  p.unit = str(s[6]);
  p.status = str(s[7]);
  p.gpu_count = to_int(s[8]);
  p.value = to_real(s[9]);
  p.noise_down = to_real(s[10]).value_or(0);
  p.noise_up = to_real(s[11]).value_or(0);
  p.reps = to_int(s[12]);
  p.scope = str(s[13]);
  p.row_index = to_int(s[14]);
  return p;
}

class SqlStore final : public HistoryStore {
 public:
  explicit SqlStore(std::unique_ptr<SqlConnection> db) : db_(std::move(db)) { migrate(); }

  int schema_version() override { return version_; }

  bool add_run(const RunRecord& run) override {
    SqlConnection& db = *db_;
    db.begin_write();
    Transaction tx(db);
    // The identity decides: a run already stored (by this or a concurrent writer) changes nothing.
    const auto inserted = db.exec(
        "INSERT INTO runs (id, created_utc, finished_utc, cluster, backend, tool_version, slurm_job_id, file_version,"
        " hosts, software, environment, source, added_utc) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
        " ON CONFLICT (id) DO NOTHING RETURNING id",
        {text(run.id), text(run.created_utc), run.finished_utc.empty() ? std::nullopt : text(run.finished_utc),
         text(run.cluster), text(run.backend), text(run.tool_version), text(run.slurm_job_id),
         number(run.file_version), text(join(run.hosts)), text(run.software), text(run.environment), text(run.source),
         text(utc_timestamp(std::chrono::system_clock::now()))});
    if (inserted.empty()) {
      tx.rollback();
      return false;
    }
    pause_for_test();
    std::vector<std::vector<SqlValue>> rows;
    for (const auto& r : run.rows)
      rows.push_back({text(run.id), number(r.index), text(r.benchmark), text(r.scope), text(r.params), number(r.gpu_count),
                      text(r.unit), real(r.value), real(r.noise_down), real(r.noise_up), number(r.reps), text(r.status)});
    insert_batched(db, "INSERT INTO run_rows (run_id, row_index, benchmark, scope, params, gpu_count, unit, value,"
                       " noise_down, noise_up, reps, status) VALUES ", 12, rows);
    rows.clear();
    for (const auto& r : run.rows)
      for (const auto& [field, value] : r.fields) rows.push_back({text(run.id), number(r.index), text(field), real(value)});
    insert_batched(db, "INSERT INTO row_fields (run_id, row_index, field, value) VALUES ", 4, rows);
    rows.clear();
    for (const auto& k : run.ranks)
      rows.push_back({text(run.id), number(k.row_index), number(k.rank), text(k.host), number(k.device), text(k.gpu),
                      real(k.value), number(k.valid ? 1 : 0), real(k.noise_down), real(k.noise_up), number(k.reps)});
    insert_batched(db, "INSERT INTO rank_values (run_id, row_index, rank, host, device, gpu, value, valid, noise_down,"
                       " noise_up, reps) VALUES ", 11, rows);
    rows.clear();
    for (const auto& m : run.members)
      rows.push_back({text(run.id), number(m.row_index), text(m.kind), text(m.member), text(m.host), real(m.value),
                      real(m.noise_down), real(m.noise_up), number(m.reps)});
    insert_batched(db, "INSERT INTO member_values (run_id, row_index, kind, member, host, value, noise_down, noise_up,"
                       " reps) VALUES ", 9, rows);
    rows.clear();
    for (std::size_t i = 0; i < run.outliers.size(); ++i)
      rows.push_back({text(run.id), number(static_cast<long long>(i)), text(run.outliers[i].hosts),
                      text(run.outliers[i].detail)});
    insert_batched(db, "INSERT INTO outliers (run_id, idx, hosts, detail) VALUES ", 4, rows);
    rows.clear();
    for (std::size_t i = 0; i < run.health.size(); ++i) {
      const auto& h = run.health[i];
      rows.push_back({text(run.id), number(static_cast<long long>(i)), number(h.rank), text(h.host), text(h.gpu),
                      text(h.verdict), text(h.line)});
    }
    insert_batched(db, "INSERT INTO health (run_id, idx, rank, host, gpu, verdict, line) VALUES ", 7, rows);
    tx.commit();
    return true;
  }

  std::vector<RunSummary> list_runs(const RunFilter& f) override {
    std::vector<SqlValue> params;
    std::string sql =
        "SELECT u.id, u.created_utc, u.cluster, u.backend, u.tool_version, u.slurm_job_id, u.source, u.hosts,"
        " u.software, (SELECT COUNT(*) FROM run_rows r WHERE r.run_id = u.id) FROM runs u WHERE 1 = 1";
    if (!f.cluster.empty()) {
      params.push_back(f.cluster);
      sql += fmt::format(" AND u.cluster = ${}", params.size());
    }
    if (!f.since.empty()) {
      params.push_back(f.since);
      sql += fmt::format(" AND u.created_utc >= ${}", params.size());
    }
    sql += " ORDER BY u.created_utc, u.id";
    std::vector<RunSummary> out;
    for (const auto& s : db_->exec(sql, params)) {
      RunSummary r{str(s[0]), str(s[1]), str(s[2]), str(s[3]), str(s[4]), str(s[5]), str(s[6]), {}, str(s[8]), to_int(s[9])};
      const auto hosts = nlohmann::json::parse(str(s[7]), nullptr, false);
      if (hosts.is_array())
        for (const auto& h : hosts) r.hosts.push_back(h.is_string() ? h.get<std::string>() : "");
      out.push_back(std::move(r));
    }
    return out;
  }

  std::vector<RowPoint> row_points(const RowQuery& q) override {
    std::vector<SqlValue> params;
    const std::string sql = fmt::format("SELECT {} FROM run_rows r JOIN runs u ON u.id = r.run_id{} ORDER BY u.created_utc, u.id, r.row_index",
                                        kRowColumns, row_where(q, params, false));
    std::vector<RowPoint> out;
    for (const auto& s : db_->exec(sql, params)) out.push_back(row_point(s));
    // Each row's stored fields (the row-field table's history entries), by the same filter.
    std::map<std::pair<std::string, int>, RowPoint*> at;
    for (auto& p : out) at[{p.run_id, p.row_index}] = &p;
    params.clear();
    const std::string fields_sql = fmt::format(
        "SELECT f.run_id, f.row_index, f.field, f.value FROM row_fields f JOIN run_rows r ON r.run_id = f.run_id"
        " AND r.row_index = f.row_index JOIN runs u ON u.id = f.run_id{}", row_where(q, params, false));
    for (const auto& s : db_->exec(fields_sql, params))
      if (const auto it = at.find({str(s[0]), to_int(s[1])}); it != at.end() && to_real(s[3]))
        it->second->fields[str(s[2])] = *to_real(s[3]);
    return out;
  }

  std::vector<RankPoint> rank_points(const RowQuery& q) override {
    std::vector<SqlValue> params;
    const std::string sql = fmt::format(
        "SELECT {}, k.host, k.gpu, k.rank, k.value, k.valid, k.noise_down, k.noise_up, k.reps FROM rank_values k"
        " JOIN run_rows r ON r.run_id = k.run_id AND r.row_index = k.row_index JOIN runs u ON u.id = k.run_id{}"
        " ORDER BY u.created_utc, u.id, r.row_index, k.rank",
        kRowColumns, row_where(q, params, true));
    std::vector<RankPoint> out;
    for (const auto& s : db_->exec(sql, params))
      out.push_back({row_point(s), str(s[15]), str(s[16]), to_int(s[17]), to_real(s[18]), to_int(s[19]) != 0,
                     to_real(s[20]).value_or(0), to_real(s[21]).value_or(0), to_int(s[22])});
    return out;
  }

  std::vector<MemberPoint> member_points(const RowQuery& q) override {
    std::vector<SqlValue> params;
    const std::string sql = fmt::format(
        "SELECT {}, m.kind, m.member, m.host, m.value, m.noise_down, m.noise_up, m.reps FROM member_values m"
        " JOIN run_rows r ON r.run_id = m.run_id AND r.row_index = m.row_index JOIN runs u ON u.id = m.run_id{}"
        " ORDER BY u.created_utc, u.id, r.row_index, m.kind, m.member",
        kRowColumns, row_where(q, params, false));
    std::vector<MemberPoint> out;
    for (const auto& s : db_->exec(sql, params))
      out.push_back({row_point(s), str(s[15]), str(s[16]), str(s[17]), to_real(s[18]).value_or(0),
                     to_real(s[19]).value_or(0), to_real(s[20]).value_or(0), to_int(s[21])});
    return out;
  }

  std::size_t delete_runs(const PruneFilter& f) override {
    if (f.before.empty()) throw Error("history prune: no date to delete runs before");
    SqlConnection& db = *db_;
    db.begin_write();
    Transaction tx(db);
    std::vector<SqlValue> params{text(f.before)};
    std::string sql = "DELETE FROM runs WHERE created_utc < $1";
    if (!f.cluster.empty()) {
      params.push_back(text(f.cluster));
      sql += " AND cluster = $2";
    }
    // Rows, rank values, outliers and health verdicts go with their run (ON DELETE CASCADE).
    const auto gone = db.exec(sql + " RETURNING id", params);
    tx.commit();
    return gone.size();
  }

  std::vector<OutlierRecord> outliers(const std::string& run_id) override {
    std::vector<OutlierRecord> out;
    for (const auto& s : db_->exec("SELECT hosts, detail FROM outliers WHERE run_id = $1 ORDER BY idx", {run_id}))
      out.push_back({str(s[0]), str(s[1])});
    return out;
  }

  std::vector<HealthRecord> health(const std::string& run_id) override {
    std::vector<HealthRecord> out;
    for (const auto& s : db_->exec("SELECT rank, host, gpu, verdict, line FROM health WHERE run_id = $1 ORDER BY idx", {run_id}))
      out.push_back({to_int(s[0]), str(s[1]), str(s[2]), str(s[3]), str(s[4])});
    return out;
  }

 private:
  // Brings the store to kStoreSchemaVersion, one transaction for all the steps, under the migration lock.
  void migrate() {
    SqlConnection& db = *db_;
    // A store already at this version is only read: no write lock, so read-only stores can be queried.
    try {
      const auto got = db.exec("SELECT value FROM gpuscale_meta WHERE key = 'schema_version'", {});
      if (!got.empty() && got[0][0] == std::to_string(kStoreSchemaVersion)) {
        version_ = kStoreSchemaVersion;
        return;
      }
    } catch (const Error& e) {
      if (e.exit_code() != kExitUsage) throw;  // unreachable; "no such table": a new store, migrated below
    }
    db.begin_migration();
    Transaction tx(db);
    db.exec("CREATE TABLE IF NOT EXISTS gpuscale_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)", {});
    const auto got = db.exec("SELECT value FROM gpuscale_meta WHERE key = 'schema_version'", {});
    int version = 0;
    if (!got.empty()) {
      try {
        version = std::stoi(str(got[0][0]));
      } catch (const std::exception&) {
        throw Error(fmt::format("store {}: schema_version '{}' is not a number (not a gpuscale history?)", db.name(),
                                str(got[0][0])));
      }
    }
    if (version == 0 && str(db.exec(db.table_count_sql(), {}).at(0).at(0)) != "0")
      throw Error(fmt::format("store {}: it holds tables but no gpuscale schema version: not a gpuscale history", db.name()));
    if (version > kStoreSchemaVersion)
      throw Error(fmt::format("store {}: schema version {} is newer than this gpuscale knows ({}): use a newer gpuscale",
                              db.name(), version, kStoreSchemaVersion));
    const auto& steps = migrations();
    if (version < kStoreSchemaVersion) {
      for (int v = version; v < kStoreSchemaVersion; ++v)
        for (const auto& statement : steps[static_cast<std::size_t>(v)]) db.exec(statement, {});
      db.exec(version == 0 ? "INSERT INTO gpuscale_meta (key, value) VALUES ('schema_version', $1)"
                           : "UPDATE gpuscale_meta SET value = $1 WHERE key = 'schema_version'",
              {std::to_string(kStoreSchemaVersion)});
    }
    tx.commit();
    version_ = kStoreSchemaVersion;
  }

  std::unique_ptr<SqlConnection> db_;
  int version_ = 0;
};

}  // namespace

std::unique_ptr<HistoryStore> open_store(const std::string& url, bool create) {
  const StoreUrl u = parse_store_url(url);
  if (u.kind == StoreKind::sqlite) return std::make_unique<SqlStore>(open_sqlite(u, create));
  return std::make_unique<SqlStore>(open_postgres(u));
}

}  // namespace gpuscale::history
