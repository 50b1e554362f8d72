#pragma once
// The little of a SQL database the history needs, so the store's statements are written once
// (sql_store.cpp) for both SQLite and PostgreSQL. Parameters are $1, $2, ... in both; every value
// travels as text (nullopt: NULL) and the column's type converts it.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "history/store_url.h"

namespace gpuscale::history {

using SqlValue = std::optional<std::string>;
using SqlRow = std::vector<SqlValue>;

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;
  // Runs one statement; returns its result rows (empty for statements without any).
  // Throws gpuscale::Error naming the store (masked) and the database's message.
  virtual std::vector<SqlRow> exec(const std::string& sql, const std::vector<SqlValue>& params = {}) = 0;
  // BEGIN for a write: SQLite takes the write lock now (BEGIN IMMEDIATE), so two writers queue instead
  // of failing when one upgrades its lock.
  virtual void begin_write() = 0;
  // BEGIN and the lock that serialises schema migrations between processes.
  virtual void begin_migration() = 0;
  virtual const std::string& name() const = 0;  // the masked URL
  // A query for the number of tables in the store's schema (a store with tables of its own but no
  // gpuscale_meta is another application's database, and is refused rather than migrated).
  virtual const char* table_count_sql() const = 0;
};

// store_factory: open the connection a URL names (sqlite_connection.cpp, postgres_connection.cpp).
std::unique_ptr<SqlConnection> open_sqlite(const StoreUrl& url, bool create);
std::unique_ptr<SqlConnection> open_postgres(const StoreUrl& url);

}  // namespace gpuscale::history
