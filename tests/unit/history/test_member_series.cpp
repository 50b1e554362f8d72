// history/member_series.h (the members' series) and their store round trip (history/sql_store.cpp).
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "analysis/result_set.h"
#include "history/content_hash.h"
#include "history/history_store.h"
#include "history/member_series.h"
#include "history/sql_connection.h"
#include "history/store_url.h"
#include "result_doc.h"

namespace gpuscale::history {
namespace {

namespace fs = std::filesystem;

RankPoint rank(const std::string& run, int rank, const std::string& host, const std::string& gpu, double v) {
  RankPoint k;
  k.row = {run, "2026-01-0" + run + "T00:00:00Z", "c", "{}", "stream.triad", "independent", "{}", "GB/s", "ok", 2, 0,
           v, 0.01, 0.01, 10, {}};
  k.host = host;
  k.gpu = gpu;
  k.rank = rank;
  k.value = v;
  k.noise_down = k.noise_up = 0.005;
  k.reps = 10;
  return k;
}

TEST(MemberSeries, GpusByUuidElseByTheirPlaceOnTheHost) {
  // Two runs: the CPU backend's ranks (no UUID) renumbered between them, h1's two ranks keep their slots.
  const std::vector<RankPoint> ranks{rank("1", 0, "h1", "-", 10), rank("1", 1, "h1", "-", 11),
                                     rank("2", 4, "h1", "-", 12), rank("2", 5, "h1", "-", 13),
                                     rank("2", 6, "h2", "GPU-x", 14)};
  const auto s = member_series(ranks, {}, {MemberKind::gpu, MemberKind::node});
  std::map<std::string, std::vector<double>> by;
  for (const auto& m : s) {
    std::vector<double> v;
    for (const auto& p : m.series.points) v.push_back(p.value);
    by[std::string(member_kind_name(m.kind)) + " " + m.member] = v;
  }
  EXPECT_EQ(by["gpu h1 slot 0"], (std::vector<double>{10, 12}));
  EXPECT_EQ(by["gpu h1 slot 1"], (std::vector<double>{11, 13}));
  EXPECT_EQ(by["gpu GPU-x"], (std::vector<double>{14}));
  EXPECT_EQ(by["node h1"], (std::vector<double>{10.5, 12.5}));
  EXPECT_EQ(s.size(), 5u);
  EXPECT_EQ(member_kind_named("nic"), MemberKind::nic);
  EXPECT_FALSE(member_kind_named("cable"));
}

TEST(MemberSeries, LinksAndNicsOfTheMatricesAreStoredAndComeBackAsSeries) {
  const fs::path dir = fs::temp_directory_path() / ("gpuscale-members-" + std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  const std::string url = "sqlite://" + (dir / "h.db").string();
  auto store = open_store(url, true);
  for (int run = 0; run < 3; ++run) {
    auto doc = testing_doc::minimal_result_doc();
    doc["created_utc"] = doc["finished_utc"] = "2026-01-0" + std::to_string(run + 1) + "T00:00:00Z";
    auto row = testing_doc::sample_row();
    row.matrices = nlohmann::json::array({nlohmann::json{
        {"kind", "node"}, {"hosts", {"n1", "n2"}}, {"values", {{nullptr, 40 + run}, {40 + run, nullptr}}},
        {"spread_down", {{0, 0.01}, {0.01, 0}}}, {"spread_up", {{0, 0.01}, {0.01, 0}}}}});
    auto record = make_run_record(result_from_json("test", nlohmann::json(doc)), sha256_hex(std::to_string(run)));
    record.members = matrix_members(row, 0);  // the sample row's matrix alone (the document's own row has none)
    ASSERT_TRUE(store->add_run(record));
  }
  const auto points = store->member_points({});
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].member, "n1~n2");
  const auto s = member_series({}, points, {MemberKind::link, MemberKind::nic});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, MemberKind::link);
  ASSERT_EQ(s[0].series.points.size(), 3u);
  EXPECT_DOUBLE_EQ(s[0].series.points[2].value, 42);
  EXPECT_TRUE(s[0].series.points[2].band.known());
  EXPECT_EQ(store->delete_runs({"", "2026-01-02"}), 1u);  // prune takes a run's member values with it
  EXPECT_EQ(store->member_points({}).size(), 2u);
  // A store of version 2 (before member_values) is migrated on open; its runs keep working.
  {
    auto db = open_sqlite(parse_store_url(url), false);
    db->exec("DROP TABLE member_values");
    db->exec("UPDATE gpuscale_meta SET value = '2' WHERE key = 'schema_version'");
  }
  auto again = open_store(url, false);
  EXPECT_EQ(again->schema_version(), kStoreSchemaVersion);
  EXPECT_TRUE(again->member_points({}).empty());
  EXPECT_EQ(again->list_runs({}).size(), 2u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuscale::history
