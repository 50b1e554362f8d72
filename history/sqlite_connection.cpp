// SQLite behind SqlConnection (sql_connection.h): one file, WAL mode, writers queued by the busy timeout.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <sqlite3.h>

#include "core/error.h"
#include "history/sql_connection.h"

namespace gpuscale::history {
namespace {

// A writer waits this long for another process's transaction before giving up (exit 3).
constexpr int kBusyTimeoutMs = 60000;

int exit_code_of(int rc) {
  switch (rc & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
    case SQLITE_FORMAT:
      return kExitUsage;  // the file is not a (sound) SQLite database: bad input
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_IOERR:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_FULL:
      return kExitNoDevice;  // 3: the store cannot be reached or written
    default:
      return kExitUsage;
  }
}

class SqliteConnection final : public SqlConnection {
 public:
  SqliteConnection(const StoreUrl& url, bool create) : name_(url.masked) {
    std::error_code ec;
    if (!create && !std::filesystem::exists(url.path, ec))
      throw Error(fmt::format("store {}: no such file (gpuscale history add creates it)", name_), kExitNoDevice);
    const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
    const int rc = sqlite3_open_v2(url.path.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
      const std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      sqlite3_close(db_);
      db_ = nullptr;
      throw Error(fmt::format("store {}: cannot open: {}", name_, why), kExitNoDevice);
    }
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
    // WAL: readers do not block the writer; foreign keys: deleting a run deletes its rows (retention).
    // A file that is not a database fails here, where no destructor runs: close it before throwing.
    try {
      enter_wal();
      exec("PRAGMA foreign_keys=ON");
    } catch (...) {
      sqlite3_close(db_);
      db_ = nullptr;
      throw;
    }
  }
  ~SqliteConnection() override { sqlite3_close(db_); }

  std::vector<SqlRow> exec(const std::string& sql, const std::vector<SqlValue>& params) override {
    sqlite3_stmt* raw = nullptr;
    check(sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &raw, nullptr));
    std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> stmt(raw, sqlite3_finalize);
    const int count = sqlite3_bind_parameter_count(raw);
    for (int i = 1; i <= count; ++i) {
      const char* pname = sqlite3_bind_parameter_name(raw, i);  // "$N": params[N - 1]
      const std::size_t n = pname ? std::stoul(pname + 1) : static_cast<std::size_t>(i);
      if (n == 0 || n > params.size()) throw Error(fmt::format("store {}: statement parameter {} unbound", name_, n));
      const SqlValue& v = params[n - 1];
      check(v ? sqlite3_bind_text(raw, i, v->data(), static_cast<int>(v->size()), SQLITE_TRANSIENT)
              : sqlite3_bind_null(raw, i));
    }
    std::vector<SqlRow> out;
    for (;;) {
      const int rc = sqlite3_step(raw);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) check(rc);
      SqlRow row;
      for (int c = 0; c < sqlite3_column_count(raw); ++c) {
        if (sqlite3_column_type(raw, c) == SQLITE_FLOAT) {  // SQLite's own text keeps 15 digits: not exact
          row.push_back(fmt::format("{}", sqlite3_column_double(raw, c)));
          continue;
        }
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(raw, c));
        row.push_back(text ? SqlValue(std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(raw, c))))
                           : std::nullopt);
      }
      out.push_back(std::move(row));
    }
    return out;
  }
  void begin_write() override { exec("BEGIN IMMEDIATE"); }
  void begin_migration() override { exec("BEGIN IMMEDIATE"); }
  const std::string& name() const override { return name_; }
  const char* table_count_sql() const override {
    return "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name <> 'gpuscale_meta'";
  }

 private:
  std::vector<SqlRow> exec(const char* sql) { return exec(std::string(sql), {}); }

  // Two processes that open a new file at once both read it in rollback mode and both ask to
  // switch it to WAL: SQLite sees a deadlock and answers SQLITE_BUSY at once, without the busy
  // handler. The switch is retried here, within the same bound as the busy timeout.
  void enter_wal() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
    auto pause = std::chrono::milliseconds(5);
    for (;;) {
      const int rc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
      if ((rc & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) return check(rc);
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(200));
    }
  }
  void check(int rc) {
    if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return;
    const int code = exit_code_of(rc);
    const char* what = code == kExitUsage && (rc & 0xff) != SQLITE_ERROR && (rc & 0xff) != SQLITE_CONSTRAINT
                           ? " (not a gpuscale history, or a damaged one)"
                           : "";
    throw Error(fmt::format("store {}: {}{}", name_, sqlite3_errmsg(db_), what), code);
  }

  std::string name_;
  sqlite3* db_ = nullptr;
};

}  // namespace

std::unique_ptr<SqlConnection> open_sqlite(const StoreUrl& url, bool create) {
  return std::make_unique<SqliteConnection>(url, create);
}

}  // namespace gpuscale::history
