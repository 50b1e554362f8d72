// results/result_file (rows and rank values to and from JSON) and the version-1 schema check
// (validate_result_json) on a minimal complete document broken one field at a time.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "harness/row_builder.h"
#include "result_doc.h"
#include "results/result_io.h"

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

TEST(ResultRow, RowRoundTripForEveryStatus) {
  for (auto status : {RowStatus::ok, RowStatus::invalid, RowStatus::failed, RowStatus::skipped}) {
    auto r = sample_row();
    r.status = status;
    if (status != RowStatus::ok) {
      r.aggregate.reset();
      r.scaling_efficiency.reset();
      r.fraction_of_peak.reset();
      r.errors = {"rank 1 (node0): something"};
    }
    const nlohmann::json j = r;
    EXPECT_EQ(j["status"], row_status_name(status));
    const auto back = j.get<ResultRow>();
    EXPECT_EQ(back.benchmark, r.benchmark);
    EXPECT_EQ(back.scope, r.scope);
    EXPECT_EQ(back.params, r.params);
    EXPECT_EQ(back.gpu_count, r.gpu_count);
    EXPECT_EQ(back.nodes, r.nodes);
    EXPECT_EQ(back.topology, r.topology);
    EXPECT_EQ(back.unit, r.unit);
    EXPECT_EQ(back.status, status);
    ASSERT_EQ(back.ranks.size(), r.ranks.size());
    for (std::size_t i = 0; i < r.ranks.size(); ++i) expect_same(back.ranks[i], r.ranks[i]);
    EXPECT_EQ(back.aggregate, r.aggregate);
    EXPECT_EQ(back.scaling_efficiency, r.scaling_efficiency);
    EXPECT_EQ(back.efficiency_basis, r.efficiency_basis);
    EXPECT_EQ(back.expected_peak, r.expected_peak);
    EXPECT_EQ(back.fraction_of_peak, r.fraction_of_peak);
    EXPECT_EQ(back.peak_source, r.peak_source);
    EXPECT_EQ(back.metrics, r.metrics);
    EXPECT_EQ(back.errors, r.errors);
    EXPECT_EQ(nlohmann::json(back), j);
  }
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
  doc = base;
  doc["results"][0]["ranks"][0].erase("stats");
  EXPECT_NE(validate_result_json(doc), "");
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
  expect_rejected([](nlohmann::json& d) { d["results"][0]["ranks"][1]["value"] = -0.5; }, "negative rank value",
                  "value");
  expect_rejected([](nlohmann::json& d) { d["results"][0]["expected_peak"] = 0.0; }, "zero peak", "expected_peak");
  expect_rejected([](nlohmann::json& d) { d["results"][0]["status"] = "great"; }, "bad status", "status");
  expect_rejected([](nlohmann::json& d) { d["results"][0]["topology"] = "cluster"; }, "bad topology", "topology");
  expect_rejected([](nlohmann::json& d) { d["environment"]["HOME"] = "/root"; }, "HOME recorded", "environment");
  expect_rejected([](nlohmann::json& d) { d["environment"]["AWS_SECRET_ACCESS_KEY"] = "x"; }, "secret recorded",
                  "environment");
  expect_rejected([](nlohmann::json& d) { d["environment"]["NCCL_DEBUG"] = 3; }, "non-string value", "environment");
  expect_rejected([](nlohmann::json& d) { d["created_utc"] = "2026-01-02 03:04:05"; }, "bad timestamp", "created_utc");
  expect_rejected([](nlohmann::json& d) { d["cluster"]["source"] = "guess"; }, "bad cluster source", "cluster");
  expect_rejected([](nlohmann::json& d) { d["schema_version"] = 2; }, "schema_version 2", "schema_version");
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
  EXPECT_EQ(schema["properties"]["schema"]["const"], kResultSchemaName);
}

}  // namespace
}  // namespace gpuscale
