// results/result_file (rows and rank values to and from JSON: the version-2 row written and read, the
// version-1 row read) and the schema check (validate_result_json, by version) on a minimal complete
// document broken one field at a time.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "harness/rows/row_builder.h"
#include "result_doc.h"
#include "results/result_io.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

using testing_doc::minimal_result_doc;
using testing_doc::sample_row;

void expect_same(const RankValue& a, const RankValue& b) {
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.host, b.host);
  EXPECT_EQ(a.device_index, b.device_index);
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.stats.n, b.stats.n);
  EXPECT_EQ(a.stats.median, b.stats.median);
  EXPECT_EQ(a.stats.stddev, b.stats.stddev);
  EXPECT_EQ(a.valid, b.valid);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.metrics, b.metrics);
}

TEST(ResultRow, RankValueRoundTrip) {
  std::mt19937_64 rng(103);
  std::uniform_real_distribution<double> x(0.0, 1e6);
  for (int i = 0; i < 100; ++i) {
    RankValue v;
    v.rank = static_cast<int>(rng() % 4096);
    v.host = "host" + std::to_string(rng() % 100);
    v.device_index = static_cast<int>(rng() % 8);
    v.stats = compute_stats({x(rng), x(rng), x(rng)});
    if (rng() % 3) v.value = v.stats.median;
    v.valid = rng() % 2;
    v.error = v.valid ? "" : "wrong value at [3]";
    v.metrics = {{"time_us", x(rng)}};
    const nlohmann::json j = v;
    EXPECT_EQ(j["value"].is_null(), !v.value.has_value());
    expect_same(j.get<RankValue>(), v);
    EXPECT_EQ(nlohmann::json::parse(j.dump()).get<RankValue>().value, v.value);  // through text too
  }
  nlohmann::json j = RankValue{};
  j.erase("metrics");  // optional on read
  EXPECT_EQ(j.get<RankValue>().metrics, nlohmann::json::object());
  j.erase("host");
  EXPECT_THROW(j.get<RankValue>(), nlohmann::json::exception);
}

void expect_same_fields(const ResultRow& back, const ResultRow& r) {
  EXPECT_EQ(back.benchmark, r.benchmark);
  EXPECT_EQ(back.scope, r.scope);
  EXPECT_EQ(back.params, r.params);
  EXPECT_EQ(back.gpu_count, r.gpu_count);
  EXPECT_EQ(back.nodes, r.nodes);
  EXPECT_EQ(back.topology, r.topology);
  EXPECT_EQ(back.unit, r.unit);
  EXPECT_EQ(back.status, r.status);
  EXPECT_EQ(back.aggregate, r.aggregate);
  EXPECT_EQ(back.scaling_efficiency, r.scaling_efficiency);
  EXPECT_EQ(back.efficiency_basis, r.efficiency_basis);
  EXPECT_EQ(back.expected_peak, r.expected_peak);
  EXPECT_EQ(back.fraction_of_peak, r.fraction_of_peak);
  EXPECT_EQ(back.peak_source, r.peak_source);
  EXPECT_EQ(back.metrics, r.metrics);
  EXPECT_EQ(back.errors, r.errors);
  EXPECT_EQ(back.attempt, r.attempt);
  EXPECT_EQ(back.input, r.input);
}

TEST(ResultRow, RowRoundTripForEveryStatus) {
  for (bool rank_stats : {false, true})
    for (auto status : {RowStatus::ok, RowStatus::invalid, RowStatus::failed, RowStatus::skipped}) {
      auto r = sample_row();
      r.status = status;
      r.rank_stats = rank_stats;
      r.attempt = static_cast<int>(status);
      if (status != RowStatus::ok) {
        r.aggregate.reset();
        r.scaling_efficiency.reset();
        r.fraction_of_peak.reset();
        r.errors = {"rank 1 (node0): something"};
        r.input = 3;
      }
      const nlohmann::json j = r;
      EXPECT_EQ(j["status"], row_status_name(status));
      EXPECT_TRUE(j["ranks"].is_object());
      EXPECT_EQ(j["ranks"].contains("stats"), rank_stats);
      const auto back = j.get<ResultRow>();
      expect_same_fields(back, r);
      EXPECT_EQ(back.rank_stats, rank_stats);
      ASSERT_EQ(back.ranks.size(), r.ranks.size());
      for (std::size_t i = 0; i < r.ranks.size(); ++i) {
        auto want = r.ranks[i];
        if (!rank_stats) want.stats = RepStats{};  // not written: the row's spread stands for them
        expect_same(back.ranks[i], want);
      }
      // The spread is the ranks' noise band: sample ranks have min 100+r, median 101+r, max 102+r.
      ASSERT_TRUE(back.spread.has_value());
      EXPECT_DOUBLE_EQ(back.spread->down, 0.0099);  // 1/101, to 2 significant digits
      EXPECT_DOUBLE_EQ(back.spread->up, 0.0099);
      EXPECT_EQ(back.spread->reps, 3u);
      EXPECT_EQ(nlohmann::json(back), j);  // nothing lost: written again, the same row
    }
}

// Ranks on random hosts with random values: columns aligned by position, a column the same for every
// rank written once, per-rank numbers rounded to 6 significant digits, a metric some ranks lack null.
TEST(ResultRow, VersionTwoColumns) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> x(1.0, 1e6);
  for (int trial = 0; trial < 50; ++trial) {
    ResultRow r = sample_row();
    r.ranks.clear();
    const int n = 1 + static_cast<int>(rng() % 40);
    const int hosts = 1 + static_cast<int>(rng() % 4);
    const bool same_device = rng() % 2;
    for (int i = 0; i < n; ++i) {
      RankValue v;
      v.rank = 3 * i + static_cast<int>(rng() % 3);
      v.host = "h" + std::to_string((i * hosts) / n);
      v.device_index = same_device ? 2 : i % 8;
      if (rng() % 5) v.value = x(rng);
      v.valid = n == 1 || i != n / 2;
      v.error = v.valid ? "" : "wrong at [7]";
      v.metrics = {{"time_us", x(rng)}, {"threads", 4}};
      if (i % 3 == 0) v.metrics["best_gb_s"] = x(rng);
      r.ranks.push_back(v);
    }
    const nlohmann::json j = r;
    const auto& c = j["ranks"];
    ASSERT_EQ(c["rank"].size(), static_cast<std::size_t>(n));
    EXPECT_EQ(c["hosts"].size(), static_cast<std::size_t>(std::min(hosts, n)));
    EXPECT_EQ(c["device_index"].is_number(), same_device || n == 1);
    EXPECT_EQ(c["valid"].is_boolean(), n == 1);
    EXPECT_EQ(c["metrics"]["threads"], 4);  // every rank the same: a scalar
    EXPECT_TRUE(c["value"].is_array());     // always an array
    const auto back = j.get<ResultRow>();
    ASSERT_EQ(back.ranks.size(), r.ranks.size());
    for (std::size_t i = 0; i < r.ranks.size(); ++i) {
      const auto& a = back.ranks[i];
      const auto& b = r.ranks[i];
      EXPECT_EQ(a.rank, b.rank);
      EXPECT_EQ(a.host, b.host);
      EXPECT_EQ(a.device_index, b.device_index);
      EXPECT_EQ(a.valid, b.valid);
      EXPECT_EQ(a.error, b.error);
      ASSERT_EQ(a.value.has_value(), b.value.has_value());
      if (b.value) {
        EXPECT_NEAR(*a.value, *b.value, *b.value * 5e-6);
        EXPECT_LE(c["value"][i].dump().size(), 8u) << c["value"][i].dump();  // 6 digits, the point (".0" when whole)
      }
      EXPECT_EQ(a.metrics.contains("best_gb_s"), i % 3 == 0);
      EXPECT_NEAR(a.metrics["time_us"].get<double>(), b.metrics["time_us"].get<double>(),
                  b.metrics["time_us"].get<double>() * 5e-6);
    }
    EXPECT_EQ(back.metrics, r.metrics);            // row-level figures keep full precision
    EXPECT_EQ(back.aggregate, r.aggregate);
    auto doc = minimal_result_doc();
    doc["results"] = nlohmann::json::array({j});
    EXPECT_EQ(validate_result_json(doc), "");
  }
}

TEST(ResultRow, VersionTwoGroups) {
  ResultRow r = sample_row();
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> x(10.0, 20.0);
  for (int g = 0; g < 6; ++g) {
    RowGroup group;
    group.ranks = {2 * g, 2 * g + 1};
    group.hosts = {"n" + std::to_string(g / 2)};
    if (g != 4) group.value = x(rng);
    group.status = g == 4 ? RowStatus::failed : RowStatus::ok;
    group.spread_down = x(rng) / 100;
    group.spread_up = x(rng) / 100;
    r.groups.push_back(group);
  }
  const nlohmann::json j = r;
  EXPECT_TRUE(j["groups"].is_object());
  EXPECT_EQ(j["groups"]["status"].size(), 6u);                // not all the same: an array
  EXPECT_EQ(j["ranks"]["hosts"].size(), 4u);                  // node0 of the ranks, then n0..n2
  EXPECT_EQ(j["groups"]["hosts"][5], nlohmann::json({3}));    // n2 is hosts[3]
  EXPECT_EQ(j["group_summary"]["measured"], 5);
  const auto back = j.get<ResultRow>();
  ASSERT_EQ(back.groups.size(), r.groups.size());
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    EXPECT_EQ(back.groups[g].ranks, r.groups[g].ranks);
    EXPECT_EQ(back.groups[g].hosts, r.groups[g].hosts);
    ASSERT_EQ(back.groups[g].value.has_value(), r.groups[g].value.has_value());
    if (r.groups[g].value) {
      EXPECT_NEAR(*back.groups[g].value, *r.groups[g].value, *r.groups[g].value * 5e-6);  // 6 digits
    }
    EXPECT_EQ(back.groups[g].status, r.groups[g].status);
    EXPECT_NEAR(back.groups[g].spread_down, r.groups[g].spread_down, r.groups[g].spread_down * 0.05);  // 2 digits
    EXPECT_NEAR(back.groups[g].spread_up, r.groups[g].spread_up, r.groups[g].spread_up * 0.05);
  }
  auto doc = minimal_result_doc();
  doc["results"] = nlohmann::json::array({j});
  EXPECT_EQ(validate_result_json(doc), "");
  // A column of the wrong length, an index past ranks.hosts: refused naming the column.
  auto bad = j;
  bad["groups"]["value"].erase(0);
  EXPECT_THROW(bad.get<ResultRow>(), Error);
  bad = j;
  bad["groups"]["hosts"][0] = {9};
  try {
    (void)bad.get<ResultRow>();
    ADD_FAILURE() << "a host index past ranks.hosts was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("groups/hosts"), std::string::npos) << e.what();
  }
  bad = j;
  bad["ranks"]["host"] = {0, 0, 0};  // 3 entries for 2 ranks
  EXPECT_THROW(bad.get<ResultRow>(), Error);
}

// Groups that tile the row's ranks in order (each gpu_count ranks, the hosts theirs) are written
// without ranks and hosts, and read back the same; groups that do not are written whole.
// Group values near DBL_MAX: the summary's median is computed halves first, so it stays finite (the
// midpoint as (a + b) / 2 overflowed to inf, written as null, and every reader refused the file).
TEST(ResultRow, GroupSummaryOfTheLargestDoublesIsFinite) {
  ResultRow r = sample_row();
  std::mt19937_64 rng(test_seed());
  const double big = std::numeric_limits<double>::max();
  const int n = 2 * (1 + static_cast<int>(rng() % 4));  // even: the median is a midpoint
  for (int g = 0; g < n; ++g) {
    RowGroup group;
    group.ranks = {g};
    group.hosts = {"n0"};
    group.value = big * (1 - static_cast<double>(rng() % 1000) / 1e7);
    r.groups.push_back(group);
  }
  r.aggregate = std::nullopt;
  const nlohmann::json j = r;
  ASSERT_TRUE(j["group_summary"]["median"].is_number()) << j["group_summary"];
  EXPECT_TRUE(std::isfinite(j["group_summary"]["median"].get<double>())) << j["group_summary"];
  EXPECT_TRUE(j["group_summary"]["spread"].is_number()) << j["group_summary"];
  EXPECT_GT(j["group_summary"]["median"].get<double>(), big / 2);
}

TEST(ResultRow, VersionTwoGroupsThatTileTheRanksLeaveThemOut) {
  std::mt19937_64 rng(test_seed());
  std::uniform_real_distribution<double> x(1.0, 50.0);
  ResultRow r = sample_row();
  r.gpu_count = 2;
  r.ranks.clear();
  for (int rank = 0; rank < 8; ++rank) {
    RankValue v;
    v.rank = rank;
    v.host = "n" + std::to_string(rank / 4);
    v.value = x(rng);
    r.ranks.push_back(v);
  }
  for (int g = 0; g < 4; ++g) {
    RowGroup group;
    group.ranks = {2 * g, 2 * g + 1};
    group.hosts = {"n" + std::to_string(g / 2)};
    group.value = x(rng);
    group.spread_down = x(rng) / 100;
    group.spread_up = x(rng) / 100;
    r.groups.push_back(group);
  }
  nlohmann::json j = r;
  EXPECT_FALSE(j["groups"].contains("ranks"));
  EXPECT_FALSE(j["groups"].contains("hosts"));
  r.aggregate = r.groups[1].value;  // the row's value is a group's, in full
  j = r;
  auto back = j.get<ResultRow>();
  EXPECT_EQ(nlohmann::json(back), j);  // written again, the same text: --resume keeps rows byte for byte
  EXPECT_LE(j["group_summary"]["min"].get<double>(), *r.aggregate);
  EXPECT_GE(j["group_summary"]["max"].get<double>(), *r.aggregate);
  ASSERT_EQ(back.groups.size(), 4u);
  for (std::size_t g = 0; g < 4; ++g) {
    EXPECT_EQ(back.groups[g].ranks, r.groups[g].ranks);
    EXPECT_EQ(back.groups[g].hosts, r.groups[g].hosts);
  }
  auto doc = minimal_result_doc();
  doc["results"] = nlohmann::json::array({j});
  EXPECT_EQ(validate_result_json(doc), "");
  // A group count that does not tile the ranks is refused, naming the groups.
  auto bad = j;
  bad["groups"]["value"].push_back(1.0);
  try {
    (void)bad.get<ResultRow>();
    ADD_FAILURE() << "5 groups of 2 were read as tiling 8 ranks";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("do not tile"), std::string::npos) << e.what();
  }
  // Interleaved groups (ranks 0 and 4 together) are written with their ranks and hosts.
  std::swap(r.groups[0].ranks[1], r.groups[2].ranks[0]);
  r.groups[0].hosts = {"n0", "n1"};
  r.groups[2].hosts = {"n0", "n1"};
  j = r;
  ASSERT_TRUE(j["groups"].contains("ranks"));
  back = j.get<ResultRow>();
  EXPECT_EQ(back.groups[0].ranks, (std::vector<int>{0, 4}));
  EXPECT_EQ(back.groups[2].hosts, (std::vector<std::string>{"n0", "n1"}));
}

TEST(ResultRow, StatusNames) {
  for (auto s : {RowStatus::ok, RowStatus::invalid, RowStatus::failed, RowStatus::skipped})
    EXPECT_EQ(parse_row_status(row_status_name(s)), s);
  EXPECT_FALSE(parse_row_status("great").has_value());
  nlohmann::json j = sample_row();
  j["status"] = "great";
  EXPECT_THROW(j.get<ResultRow>(), nlohmann::json::exception);
}

TEST(ResultRow, KeyIgnoresParameterOrderButNotGpuCount) {
  auto a = sample_row(), b = sample_row();
  a.params = nlohmann::json::parse(R"({"dtype": "fp64", "elements": 5})");
  b.params = nlohmann::json::parse(R"({"elements": 5, "dtype": "fp64"})");
  EXPECT_EQ(row_key(a), row_key(b));
  b.gpu_count = 4;
  EXPECT_NE(row_key(a), row_key(b));
  b = a;
  b.params["elements"] = 6;
  EXPECT_NE(row_key(a), row_key(b));
}

TEST(ResultSchema, AcceptsTheMinimalDocument) {
  EXPECT_EQ(validate_result_json(minimal_result_doc()), "");
  auto doc = minimal_result_doc();
  doc["finished_utc"] = nullptr;  // a run still in progress
  doc["summary"]["exit_code"] = nullptr;
  doc["summary"]["complete"] = false;
  doc["results"] = nlohmann::json::array();
  doc["test_fault"] = "wrong:stream.triad";
  doc["slurm"] = {
      {"job_id", "123"}, {"partition", nullptr}, {"nodelist", "nid[1-2]"}, {"cluster", nullptr}, {"ntasks", "8"}};
  EXPECT_EQ(validate_result_json(doc), "");
}

TEST(ResultSchema, RejectsEachMissingRequiredField) {
  const auto base = minimal_result_doc();
  for (const char* field :
       {"schema", "schema_version", "tool", "created_utc", "finished_utc", "cluster", "backend", "command_line",
        "environment", "slurm", "mpi", "software", "hosts", "ranks", "links", "plan", "results", "summary"}) {
    auto doc = base;
    doc.erase(field);
    EXPECT_NE(validate_result_json(doc), "") << field;
  }
  auto doc = base;
  doc["results"][0].erase("aggregate");  // null is allowed, absent is not
  EXPECT_NE(validate_result_json(doc), "");
  for (const char* column : {"rank", "hosts", "host", "device_index", "value", "valid", "error", "metrics"}) {
    doc = base;
    doc["results"][0]["ranks"].erase(column);
    EXPECT_NE(validate_result_json(doc), "") << column;
  }
}

void expect_rejected(void (*edit)(nlohmann::json&), const char* what, const std::string& mentions) {
  auto doc = minimal_result_doc();
  edit(doc);
  const auto problems = validate_result_json(doc);
  EXPECT_NE(problems, "") << what;
  EXPECT_NE(problems.find(mentions), std::string::npos) << what << ": " << problems;
}

TEST(ResultSchema, RejectsWrongTypesAndValues) {
  expect_rejected([](nlohmann::json& d) { d["backend"] = 5; }, "backend not a string", "backend");
  expect_rejected([](nlohmann::json& d) { d["backend"] = "rocm"; }, "unknown backend", "backend");
  expect_rejected([](nlohmann::json& d) { d["mpi"]["world_size"] = "2"; }, "world_size a string", "world_size");
  expect_rejected([](nlohmann::json& d) { d["mpi"]["world_size"] = 0; }, "no ranks", "world_size");
  expect_rejected([](nlohmann::json& d) { d["results"][0]["gpu_count"] = 1.5; }, "fractional count", "gpu_count");
  expect_rejected([](nlohmann::json& d) { d["results"][0]["aggregate"] = -1.0; }, "negative aggregate", "aggregate");
  expect_rejected([](nlohmann::json& d) { d["results"][0]["ranks"]["value"][1] = -0.5; }, "negative rank value",
                  "value");
  expect_rejected([](nlohmann::json& d) { d["results"][0]["ranks"]["host"] = -1; }, "negative host index", "host");
  {  // a host named twice: the reader refuses it (the schema does not say uniqueItems: quadratic at scale)
    auto d = minimal_result_doc();
    auto row = d["results"][0];
    row["ranks"]["hosts"] = {"a", "a"};
    try {
      (void)row.get<ResultRow>();
      ADD_FAILURE() << "a row naming a host twice was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("ranks/hosts: names a host twice"), std::string::npos) << e.what();
    }
  }
  expect_rejected([](nlohmann::json& d) { d["results"][0]["spread"] = {{"down", -0.1}, {"up", 0}, {"reps", 3}}; },
                  "negative spread", "spread");
  expect_rejected([](nlohmann::json& d) { d["results"][0]["ranks"]["stats"] = {{"n", {3}}}; }, "stats without median",
                  "stats");
  expect_rejected([](nlohmann::json& d) { d["reliability"] = {{"bytes_written", -4}}; }, "negative bytes", "bytes_written");
  expect_rejected([](nlohmann::json& d) { d["run_id"] = 7; }, "run_id a number", "run_id");
  expect_rejected([](nlohmann::json& d) { d["results"][0]["expected_peak"] = 0.0; }, "zero peak", "expected_peak");
  expect_rejected([](nlohmann::json& d) { d["results"][0]["status"] = "great"; }, "bad status", "status");
  expect_rejected([](nlohmann::json& d) { d["results"][0]["topology"] = "cluster"; }, "bad topology", "topology");
  expect_rejected([](nlohmann::json& d) { d["environment"]["HOME"] = "/root"; }, "HOME recorded", "environment");
  expect_rejected([](nlohmann::json& d) { d["environment"]["AWS_SECRET_ACCESS_KEY"] = "x"; }, "secret recorded",
                  "environment");
  expect_rejected([](nlohmann::json& d) { d["environment"]["NCCL_DEBUG"] = 3; }, "non-string value", "environment");
  expect_rejected([](nlohmann::json& d) { d["created_utc"] = "2026-01-02 03:04:05"; }, "bad timestamp", "created_utc");
  expect_rejected([](nlohmann::json& d) { d["cluster"]["source"] = "guess"; }, "bad cluster source", "cluster");
  expect_rejected([](nlohmann::json& d) { d["schema_version"] = 3; }, "schema_version 3", "schema_version");
  expect_rejected([](nlohmann::json& d) { d["schema_version"] = 1; }, "v2 rows under version 1", "ranks");
  expect_rejected([](nlohmann::json& d) { d["tool"]["name"] = "other"; }, "other tool", "tool");
  expect_rejected([](nlohmann::json& d) { d["hosts"] = nlohmann::json::array(); }, "no hosts", "hosts");
  expect_rejected([](nlohmann::json& d) { d["slurm"] = {{"partition", "gpu"}}; }, "slurm without job id", "slurm");
  EXPECT_NE(validate_result_json(nlohmann::json::array()), "");
}

TEST(ResultSchema, AcceptsRowsFromTheRowBuilder) {
  // Every status the row builder produces is a valid row of the schema.
  for (int variant = 0; variant < 4; ++variant) {
    RowInputs in;
    in.benchmark = "all_reduce";
    in.scope = Scope::collective;
    in.unit = "GB/s";
    in.params = {{"dtype", "fp32"}, {"size_bytes", 1024}};
    in.gpu_count = 2;
    in.topology = "intra-node";
    in.peak = {variant == 0 ? std::optional<double>(20.0) : std::nullopt, "unknown"};
    for (int r = 0; r < 2; ++r) {
      RankEntry e;
      e.rank = r;
      e.host = "node0";
      e.m.stats = compute_stats({1.0, 2.0, 3.0});
      e.m.aggregate = 2.0;
      e.m.valid = variant != 1;
      e.m.failed = variant == 2 && r == 1;
      e.m.skipped = variant == 3;
      if (variant == 3) e.m.stats.reset();
      in.ranks.push_back(e);
    }
    auto doc = minimal_result_doc();
    doc["results"] = nlohmann::json::array({build_row(in)});
    EXPECT_EQ(validate_result_json(doc), "") << "variant " << variant;
  }
}

TEST(ResultSchema, ShippedSchemaText) {
  const auto schema = nlohmann::json::parse(result_schema_text());
  EXPECT_EQ(schema["properties"]["schema_version"]["const"], kResultSchemaVersion);
  // The header every version shares is in result-defs.schema.json (results/schema/), referred to.
  EXPECT_EQ(schema["allOf"][0]["$ref"], "result-defs.schema.json#/definitions/header");
  EXPECT_FALSE(schema["definitions"].contains("rank_value"));  // version 1's rank entries
}

TEST(ResultSchema, AcceptsTheNewHeaderFields) {
  auto doc = minimal_result_doc();
  doc["run_id"] = "r-20260102-1";
  doc["reliability"] = {{"bytes_written", 123456}, {"journal", "run.json.journal"}, {"harness", {{"write_s", 0.25}}}};
  EXPECT_EQ(validate_result_json(doc), "");
}

}  // namespace
}  // namespace gpuscale
