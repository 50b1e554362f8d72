// history/sql_store.cpp on SQLite: identity, transactions, queries, migrations and bad stores.
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "test_seed.h"
#include "analysis/result_set.h"
#include "core/error.h"
#include "core/shown_text.h"
#include "history/content_hash.h"
#include "history/history_store.h"
#include "history/sql_connection.h"
#include "result_doc.h"

namespace gpuscale::history {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("gpuscale-history-" + std::to_string(std::random_device{}()));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string url(const char* name) const { return "sqlite://" + (path / name).string(); }
};

// A verified run: the minimal document with random values, on `cluster`, created at `created`.
RunRecord random_run(const std::string& cluster, const std::string& created) {
  static std::mt19937 rng(test_seed());
  auto doc = testing_doc::minimal_result_doc();
  doc["cluster"]["name"] = cluster;
  doc["created_utc"] = doc["finished_utc"] = created;
  auto r = testing_doc::sample_row();
  std::uniform_real_distribution<double> v(50, 150);
  for (auto& k : r.ranks) k.value = v(rng);
  r.aggregate = *r.ranks[0].value + *r.ranks[1].value;
  r.rank_stats = true;  // the file keeps each rank's repetition statistics (--rank-stats)
  doc["results"] = nlohmann::json::array({nlohmann::json(r)});
  const auto loaded = result_from_json("test", doc);
  return make_run_record(loaded, sha256_hex(doc.dump()));
}

TEST(ContentHash, Sha256OfKnownText) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(SqliteStore, ARunIsStoredOnceByItsHash) {
  TempDir dir;
  auto store = open_store(dir.url("h.db"), true);
  EXPECT_EQ(store->schema_version(), kStoreSchemaVersion);
  const auto run = random_run("c1", "2026-01-01T00:00:00Z");
  EXPECT_TRUE(store->add_run(run));
  EXPECT_FALSE(store->add_run(run));
  const auto runs = store->list_runs({});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].id, run.id);
  EXPECT_EQ(runs[0].rows, 1);
  EXPECT_EQ(runs[0].cluster, "c1");
  const auto rows = store->row_points({});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(*rows[0].value, *run.rows[0].value);  // round-trips exactly
  EXPECT_EQ(rows[0].params, run.rows[0].params);
  const auto ranks = store->rank_points({});
  ASSERT_EQ(ranks.size(), 2u);
  // Each rank's own band from its repetitions (100, 101, 102: 1/101 each way, 3 repetitions).
  EXPECT_NEAR(ranks[0].noise_down, 1.0 / 101, 1e-12);
  EXPECT_NEAR(ranks[0].noise_up, 1.0 / 101, 1e-12);
  EXPECT_EQ(ranks[0].reps, 3);
  // A second connection (another process would be the same) sees the same, unchanged.
  auto again = open_store(dir.url("h.db"), false);
  EXPECT_EQ(again->list_runs({}).size(), 1u);
}

// A subnormal (5e-324) is a number a result file may hold: it is stored, and read back exactly by every
// query, as are the largest double and zero (std::stod refused the subnormal on every read, so one such
// file broke trend, export and regressions for the whole store).
TEST(SqliteStore, SubnormalAndExtremeValuesRoundTrip) {
  TempDir dir;
  auto store = open_store(dir.url("h.db"), true);
  auto run = random_run("c1", "2026-01-01T00:00:00Z");
  const double tiny = std::numeric_limits<double>::denorm_min(), huge = std::numeric_limits<double>::max();
  run.rows[0].value = tiny;
  run.rows[0].noise_up = 2.2250738585072e-309;
  run.rows[0].fields["fraction_of_peak"] = tiny;
  run.ranks[0].value = huge;
  run.ranks[1].value = 0.0;
  run.ranks[1].noise_down = tiny;
  ASSERT_TRUE(store->add_run(run));
  const auto rows = store->row_points({});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(*rows[0].value, tiny);
  EXPECT_EQ(rows[0].noise_up, 2.2250738585072e-309);
  EXPECT_EQ(rows[0].fields.at("fraction_of_peak"), tiny);
  const auto ranks = store->rank_points({});
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(*ranks[0].value, huge);
  EXPECT_EQ(*ranks[1].value, 0.0);
  EXPECT_EQ(ranks[1].noise_down, tiny);
}

// A valid file's long strings (a 1 MiB cluster name, host, environment value, health line...) are kept
// cut as every output shows them (clip_text: 400 bytes, the cut marked), so the store's memory and
// each query's rows do not grow with them.
TEST(SqliteStore, LongStringsAreStoredCut) {
  TempDir dir;
  const std::string big(1 << 20, 'x');
  auto doc = testing_doc::minimal_result_doc();
  doc["cluster"]["name"] = "c" + big;
  doc["hosts"][0]["name"] = "h" + big;
  for (auto& k : doc["ranks"]) k["host"] = "h" + big;
  auto row = testing_doc::sample_row();
  for (auto& k : row.ranks) k.host = "h" + big;
  doc["results"] = nlohmann::json::array({nlohmann::json(row)});
  doc["environment"]["NCCL_LONG"] = "e" + big;
  doc["software"]["extra" + big] = "s" + big;
  doc["tool"]["version"] = "v" + big;
  LoadedResult loaded = result_from_json("test", doc);
  loaded.doc["analysis"] = {{"outliers", {{{"hosts", {"o" + big}}, {"kind", "node_pair"}, {"detail", "d" + big}}}}};
  loaded.doc["health"] = {{"gpus", {{{"rank", 1}, {"host", "h" + big}, {"gpu", 0}, {"verdict", "FAIL"}, {"line", "l" + big}}}}};
  const auto run = make_run_record(loaded, sha256_hex("long strings"));
  const std::size_t most = clip_text(std::string(2 << 20, 'x')).size();  // 400 bytes and the marker
  auto cut = [&](const std::string& s, const std::string& what) {
    EXPECT_LE(s.size(), most) << what;
    EXPECT_NE(s.find("bytes cut]"), std::string::npos) << what;
  };
  cut(run.cluster, "cluster");
  cut(run.hosts.at(0), "hosts");
  cut(run.tool_version, "tool version");
  cut(run.ranks.at(0).host, "rank host");
  cut(run.outliers.at(0).hosts, "outlier hosts");
  cut(run.health.at(0).host, "health host");
  cut(run.health.at(0).line, "health line");
  EXPECT_LE(run.environment.size(), 3 * most);
  EXPECT_LE(run.software.size(), 4 * most);
  EXPECT_LE(run.outliers.at(0).detail.size(), 4 * most);
  EXPECT_EQ(nlohmann::json::parse(run.environment)["NCCL_LONG"], clip_text("e" + big));
  auto store = open_store(dir.url("h.db"), true);
  ASSERT_TRUE(store->add_run(run));
  EXPECT_EQ(store->list_runs({}).at(0).cluster, clip_text("c" + big));
  const auto rows = store->row_points({});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_LE(rows[0].cluster.size() + rows[0].software.size(), 6 * most);
  for (const auto& k : store->rank_points({})) EXPECT_EQ(k.host, clip_text("h" + big));
}

TEST(SqliteStore, FiltersByClusterSinceBenchmarkAndHost) {
  TempDir dir;
  auto store = open_store(dir.url("h.db"), true);
  for (int i = 0; i < 6; ++i)
    store->add_run(random_run(i % 2 ? "odd" : "even", "2026-01-0" + std::to_string(i + 1) + "T12:00:00Z"));
  EXPECT_EQ(store->list_runs({"odd", ""}).size(), 3u);
  EXPECT_EQ(store->list_runs({"", "2026-01-04"}).size(), 3u);
  EXPECT_EQ(store->list_runs({"even", "2026-01-04"}).size(), 1u);
  EXPECT_EQ(store->row_points({"stream.triad", "", "odd", "", "", ""}).size(), 3u);
  EXPECT_TRUE(store->row_points({"all_reduce", "", "", "", "", ""}).empty());
  EXPECT_EQ(store->rank_points({"", "", "", "node0", "", ""}).size(), 12u);
  EXPECT_TRUE(store->rank_points({"", "", "", "node9", "", ""}).empty());
  RowQuery recent;
  recent.since = "2026-01-05";  // runs 5 and 6: 2 ranks each
  EXPECT_EQ(store->rank_points(recent).size(), 4u);
  recent.cluster = "even";  // run 5 alone
  EXPECT_EQ(store->rank_points(recent).size(), 2u);
  recent = {};
  recent.since = "2026-01-04";
  EXPECT_EQ(store->row_points(recent).size(), 3u);
  const auto rows = store->row_points({});
  for (std::size_t i = 1; i < rows.size(); ++i) EXPECT_LE(rows[i - 1].created_utc, rows[i].created_utc);
}

TEST(SqliteStore, PruneDeletesOldRunsWithEverythingOfThem) {
  TempDir dir;
  auto store = open_store(dir.url("h.db"), true);
  for (int i = 0; i < 6; ++i)  // even on days 1, 3, 5; odd on days 2, 4, 6
    store->add_run(random_run(i % 2 ? "odd" : "even", "2026-01-0" + std::to_string(i + 1) + "T12:00:00Z"));
  const auto odd_ranks = store->rank_points({"", "", "odd", "", "", ""}).size();
  EXPECT_EQ(store->delete_runs({"odd", "2026-01-04"}), 1u);  // day 2; day 4 is not before 2026-01-04
  EXPECT_EQ(store->list_runs({"odd", ""}).size(), 2u);
  EXPECT_EQ(store->list_runs({"even", ""}).size(), 3u);
  EXPECT_EQ(store->rank_points({"", "", "odd", "", "", ""}).size(), odd_ranks - 2);  // its 2 rank values went too
  EXPECT_EQ(store->delete_runs({"", "2026-01-01"}), 0u);
  EXPECT_EQ(store->delete_runs({"", "2027-01-01"}), 5u);
  EXPECT_TRUE(store->list_runs({}).empty());
  EXPECT_TRUE(store->rank_points({}).empty());
  EXPECT_TRUE(store->row_points({}).empty());
  EXPECT_THROW(store->delete_runs({"", ""}), Error);  // never "every run" by omission
}

TEST(SqliteStore, AFailedWriteLeavesTheStoreAsItWas) {
  TempDir dir;
  auto store = open_store(dir.url("h.db"), true);
  const auto first = random_run("c1", "2026-01-01T00:00:00Z");
  store->add_run(first);
  auto broken = random_run("c1", "2026-01-02T00:00:00Z");
  broken.ranks[1].row_index = 7;  // a rank of a row the run lacks: the foreign key fails mid-transaction
  EXPECT_THROW(store->add_run(broken), Error);
  EXPECT_EQ(store->list_runs({}).size(), 1u);
  EXPECT_EQ(store->rank_points({}).size(), 2u);
  broken.ranks[1].row_index = 0;  // the same run, now sound, is stored: nothing of the failed try remains
  EXPECT_TRUE(store->add_run(broken));
  EXPECT_EQ(store->list_runs({}).size(), 2u);
}

TEST(SqliteStore, OutliersAndHealthVerdictsKept) {
  TempDir dir;
  auto store = open_store(dir.url("h.db"), true);
  LoadedResult loaded = result_from_json("test", testing_doc::minimal_result_doc());
  loaded.doc["analysis"] = {{"outliers", {{{"hosts", {"n3", "n4"}}, {"kind", "node_pair"}, {"below_median", 0.9}}}}};
  loaded.doc["health"] = {{"gpus", {{{"rank", 1}, {"host", "n3"}, {"gpu", 0}, {"verdict", "FAIL"}, {"line", "n3 GPU 0: XID 79"}}}}};
  const auto run = make_run_record(loaded, sha256_hex("outliers and health"));
  ASSERT_TRUE(store->add_run(run));
  const auto outliers = store->outliers(run.id);
  ASSERT_EQ(outliers.size(), 1u);
  EXPECT_EQ(outliers[0].hosts, "n3,n4");
  EXPECT_EQ(nlohmann::json::parse(outliers[0].detail)["kind"], "node_pair");
  const auto health = store->health(run.id);
  ASSERT_EQ(health.size(), 1u);
  EXPECT_EQ(health[0].host, "n3");
  EXPECT_EQ(health[0].verdict, "FAIL");
  EXPECT_EQ(health[0].rank, 1);
  EXPECT_TRUE(store->outliers("no such run").empty());
}

TEST(SqliteStore, NewerSchemaRefusedWithItsVersion) {
  TempDir dir;
  open_store(dir.url("h.db"), true);
  {
    auto db = open_sqlite(parse_store_url(dir.url("h.db")), false);
    db->exec("UPDATE gpuscale_meta SET value = '9' WHERE key = 'schema_version'");
  }
  try {
    open_store(dir.url("h.db"), false);
    FAIL() << "a store at schema version 9 was opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("schema version 9 is newer"), std::string::npos) << e.what();
  }
}

TEST(SqliteStore, AnotherApplicationsDatabaseIsRefused) {
  TempDir dir;
  {
    auto db = open_sqlite(parse_store_url(dir.url("other.db")), true);
    db->exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY)");
  }
  try {
    open_store(dir.url("other.db"), true);
    FAIL() << "another application's database was migrated";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("not a gpuscale history"), std::string::npos) << e.what();
  }
}

TEST(SqliteStore, AReadOnlyStoreCanBeQueried) {
  TempDir dir;
  open_store(dir.url("h.db"), true)->add_run(random_run("c1", "2026-01-01T00:00:00Z"));
  auto ro = "sqlite://" + (dir.path / "h.db").string();
  fs::permissions(dir.path / "h.db", fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  // (root reads and writes it anyway: the query must work either way, and add nothing)
  EXPECT_EQ(open_store(ro, false)->list_runs({}).size(), 1u);
}

TEST(SqliteStore, MissingDamagedAndUnwritableStores) {
  TempDir dir;
  try {
    open_store(dir.url("absent.db"), false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 3) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path / "absent.db"));  // a query creates nothing
  std::ofstream(dir.path / "junk.db") << std::string(4096, 'x');
  try {
    open_store(dir.url("junk.db"), false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2) << e.what();
    EXPECT_NE(std::string(e.what()).find("not a database"), std::string::npos) << e.what();
  }
  try {
    open_store("sqlite://" + (dir.path / "no" / "such" / "h.db").string(), true);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 3) << e.what();
  }
}

}  // namespace
}  // namespace gpuscale::history
