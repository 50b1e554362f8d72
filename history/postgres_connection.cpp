// PostgreSQL behind SqlConnection (sql_connection.h), through libpq: for a cluster whose jobs write at once.
#include <memory>

#include <fmt/format.h>
#include <libpq-fe.h>

#include "core/error.h"
#include "history/sql_connection.h"

namespace gpuscale::history {
namespace {

// Any fixed number: the advisory lock that serialises schema migrations between writers.
constexpr long long kMigrationLock = 0x67707573L;

// libpq's message, first line, with the URL's password (should a message ever quote it) masked.
std::string clean(std::string msg, const std::string& password) {
  if (const auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
  if (!password.empty())
    for (std::size_t p; (p = msg.find(password)) != std::string::npos;) msg.replace(p, password.size(), "***");
  return msg;
}

class PostgresConnection final : public SqlConnection {
 public:
  explicit PostgresConnection(const StoreUrl& url) : name_(url.masked), password_(url_password(url.conninfo)) {
    conn_ = PQconnectdb(url.conninfo.c_str());
    if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
      const std::string why = conn_ ? clean(PQerrorMessage(conn_), password_) : "out of memory";
      PQfinish(conn_);
      conn_ = nullptr;
      // A conninfo libpq cannot parse is a malformed URL (2); anything else is an unreachable store (3).
      const bool malformed = why.find("invalid") != std::string::npos && why.find("URI") != std::string::npos;
      throw Error(fmt::format("store {}: cannot connect: {}", name_, why), malformed ? kExitUsage : kExitNoDevice);
    }
    PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);  // CREATE ... IF NOT EXISTS notices
  }
  ~PostgresConnection() override { PQfinish(conn_); }

  std::vector<SqlRow> exec(const std::string& sql, const std::vector<SqlValue>& params) override {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
    std::unique_ptr<PGresult, decltype(&PQclear)> res(
        PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0),
        PQclear);
    const auto status = res ? PQresultStatus(res.get()) : PGRES_FATAL_ERROR;
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      const char* state = res ? PQresultErrorField(res.get(), PG_DIAG_SQLSTATE) : nullptr;
      const std::string s = state ? state : "";
      // Connection (08), authorisation (28) and privilege (42501) failures: the store cannot be reached.
      const bool unreachable = PQstatus(conn_) != CONNECTION_OK || s.rfind("08", 0) == 0 || s.rfind("28", 0) == 0 ||
                               s == "42501" || s.rfind("57", 0) == 0;
      throw Error(fmt::format("store {}: {}", name_, clean(PQerrorMessage(conn_), password_)),
                  unreachable ? kExitNoDevice : kExitUsage);
    }
    std::vector<SqlRow> out;
    for (int r = 0; r < PQntuples(res.get()); ++r) {
      SqlRow row;
      for (int c = 0; c < PQnfields(res.get()); ++c)
        row.push_back(PQgetisnull(res.get(), r, c) ? std::nullopt
                                                   : SqlValue(std::string(PQgetvalue(res.get(), r, c),
                                                                          static_cast<std::size_t>(PQgetlength(res.get(), r, c)))));
      out.push_back(std::move(row));
    }
    return out;
  }
  void begin_write() override { exec("BEGIN", {}); }
  void begin_migration() override {
    exec("BEGIN", {});
    exec(fmt::format("SELECT pg_advisory_xact_lock({})", kMigrationLock), {});
  }
  const std::string& name() const override { return name_; }
  const char* table_count_sql() const override {
    return "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()"
           " AND table_name <> 'gpuscale_meta'";
  }

 private:
  std::string name_, password_;
  PGconn* conn_ = nullptr;
};

}  // namespace

std::unique_ptr<SqlConnection> open_postgres(const StoreUrl& url) { return std::make_unique<PostgresConnection>(url); }

}  // namespace gpuscale::history
