// gpuscale merge: the rules of analysis/merge.h on small, schema-valid result documents (a version-1
// input: tests/unit/results/test_result_upgrade.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "analysis/merge.h"
#include "core/error.h"
#include "results/result_io.h"
#include "results/result_stream.h"
#include "result_doc.h"

namespace gpuscale {
namespace {

using nlohmann::json;

json row(const std::string& bench, int k, const std::string& status, double value, const std::string& dtype = "fp64") {
  ResultRow r;
  for (int rank = 0; rank < k; ++rank) {
    RankValue v;
    v.rank = rank;
    v.host = "n0";
    v.value = value;
    v.stats.n = 1;
    v.stats.median = v.stats.min = v.stats.max = v.stats.mean = v.stats.lo = v.stats.hi = value;
    v.valid = status != "invalid";
    r.ranks.push_back(v);
  }
  r.benchmark = bench;
  r.scope = "independent";
  r.params = {{"dtype", dtype}};
  r.gpu_count = k;
  r.topology = k == 1 ? "single" : "intra-node";
  r.unit = "GB/s";
  r.status = *parse_row_status(status);
  if (status == "ok") r.aggregate = value * k;
  r.efficiency_basis = r.peak_source = "test";
  r.rank_stats = true;
  return r;  // as gpuscale writes it (version 2)
}

// A schema-valid result of `world` ranks on `hosts`, from Slurm job `job` (the shared minimal document,
// reshaped).
json result(const std::string& job, int world, std::vector<std::string> hosts, json rows, bool complete = true,
            const std::string& backend = "cpu") {
  json d = testing_doc::minimal_result_doc();
  json h = json::array(), ranks = json::array();
  for (std::size_t n = 0; n < hosts.size(); ++n)
    h.push_back({{"name", hosts[n]}, {"node_index", n}, {"cpu_model", "cpu " + hosts[n]}, {"ranks", json::array()}});
  for (int r = 0; r < world; ++r) {
    const auto node = static_cast<std::size_t>(r) * hosts.size() / static_cast<std::size_t>(world);
    h[node]["ranks"].push_back(r);
    json rank = d["ranks"][0];
    rank["rank"] = r;
    rank["host"] = hosts[node];
    rank["device"]["backend"] = backend;
    ranks.push_back(rank);
  }
  const std::string digit = job.substr(job.size() - 1);
  d["created_utc"] = "2026-11-29T10:00:0" + digit + "Z";
  d["finished_utc"] = complete ? json("2026-11-29T11:00:0" + digit + "Z") : json(nullptr);
  d["cluster"] = {{"name", "ci"}, {"source", "SLURM_CLUSTER_NAME"}};
  d["backend"] = backend;
  d["environment"] = {{"SLURM_JOB_ID", job}, {"OMP_PROC_BIND", "close"}};
  d["slurm"] = {{"job_id", job}, {"partition", "debug"}, {"nodelist", "n0"}, {"cluster", "ci"}};
  d["mpi"]["world_size"] = world;
  d["hosts"] = h;
  d["ranks"] = ranks;
  d["plan"]["seed"] = 7;
  // A braced list of one row may arrive as that row, or as a list of one list: the rows are its objects.
  d["results"] = json::array();
  std::function<void(const json&)> add = [&](const json& j) {
    if (j.is_object()) d["results"].push_back(j);
    else for (const auto& e : j) add(e);
  };
  add(rows);
  // Each row's ranks on the hosts this world places them on, and the plan and summary of its rows, as
  // the run writes them (the semantic validator holds every reader to it).
  std::map<std::string, int> count;
  json benchmarks = json::array(), counts = json::array();
  for (auto& j : d["results"]) {
    ResultRow r = j.get<ResultRow>();
    std::set<std::string> spanned;
    for (auto& v : r.ranks) spanned.insert(v.host = ranks[static_cast<std::size_t>(v.rank)]["host"].get<std::string>());
    r.nodes = static_cast<int>(std::max<std::size_t>(1, spanned.size()));
    if (r.gpu_count > 1) r.topology = r.nodes > 1 ? "inter-node" : "intra-node";
    if (r.status != RowStatus::ok && r.errors.empty()) r.errors = {"planted by the test"};
    j = r;
    ++count[j["status"].get<std::string>()];
    if (std::find(benchmarks.begin(), benchmarks.end(), j["benchmark"]) == benchmarks.end()) benchmarks.push_back(j["benchmark"]);
    if (std::find(counts.begin(), counts.end(), j["gpu_count"]) == counts.end()) counts.push_back(j["gpu_count"]);
  }
  std::sort(counts.begin(), counts.end());
  if (counts.empty()) counts.push_back(1);
  d["plan"]["benchmarks"] = benchmarks;
  d["plan"]["gpu_counts"] = counts;
  const bool valid = count["invalid"] + count["failed"] == 0;
  d["summary"] = {{"complete", complete}, {"valid", valid}, {"rows", d["results"].size()}, {"ok", count["ok"]},
                  {"invalid", count["invalid"]}, {"failed", count["failed"]}, {"skipped", count["skipped"]},
                  {"exit_code", complete ? json(valid ? 0 : 1) : json(nullptr)}};
  return d;
}

MergeContext ctx() { return {{"gpuscale", "merge", "-o", "m.json"}, "0.1.0", "def"}; }

// An input as gpuscale merge loads it.
MergeInput in(const std::string& file, const json& doc) { return {file, result_from_json(file, doc), ""}; }

TEST(Merge, CampaignOfOneAndTwoNodesKeepsEveryGpuCountOnce) {
  const json one = result("101", 2, {"n0"}, {row("stream.triad", 1, "ok", 10), row("stream.triad", 2, "ok", 9)});
  const json two = result("102", 4, {"n0", "n1"},
                          {row("stream.triad", 1, "ok", 11), row("stream.triad", 2, "ok", 8), row("stream.triad", 4, "ok", 7)});
  const auto out = merge_results({in("one.json", one), in("two.json", two)}, ctx());
  const json m = merged_document(out);
  EXPECT_EQ(validate_result_json(m), "");
  EXPECT_TRUE(out.problems.empty());
  EXPECT_EQ(m["cluster"]["source"], "merge");
  EXPECT_TRUE(m["slurm"].is_null());
  ASSERT_EQ(m["results"].size(), 3u);
  // Duplicates (k = 1, 2) come from the larger world; rows are ordered by GPU count.
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(m["results"][i]["gpu_count"], 1 << i);
    EXPECT_EQ(m["results"][i]["input"], 1);
  }
  EXPECT_EQ(m["results"][0]["ranks"]["value"][0], 11.0);
  EXPECT_EQ(m["plan"]["gpu_counts"], json({1, 2, 4}));
  EXPECT_EQ(m["mpi"]["world_size"], 4);
  EXPECT_EQ(m["hosts"].size(), 2u);
  const json& from = m["merged_from"];
  EXPECT_EQ(from[0]["job_id"], "101");
  EXPECT_EQ(from[0]["rows_kept"], 0);
  EXPECT_EQ(from[0]["rows_superseded"], 2);
  EXPECT_EQ(from[1]["job_id"], "102");
  EXPECT_EQ(from[1]["rows_kept"], 3);
  EXPECT_EQ(from[1]["world_size"], 4);
  EXPECT_TRUE(m["summary"]["complete"]);
  EXPECT_EQ(m["summary"]["exit_code"], 0);
  EXPECT_EQ(m["created_utc"], "2026-11-29T10:00:01Z");
  EXPECT_EQ(m["finished_utc"], "2026-11-29T11:00:02Z");
}

TEST(Merge, MeasuredRowBeatsAFailedOneFromALargerWorld) {
  const json small = result("201", 1, {"n0"}, {row("gemm", 1, "ok", 3)});
  const json big = result("202", 2, {"n0"}, {row("gemm", 1, "failed", 0), row("gemm", 2, "ok", 2.5)});
  const auto m = merged_document(merge_results({in("small.json", small), in("big.json", big)}, ctx()));
  ASSERT_EQ(m["results"].size(), 2u);
  EXPECT_EQ(m["results"][0]["status"], "ok");
  EXPECT_EQ(m["results"][0]["input"], 0);
  EXPECT_EQ(m["summary"]["failed"], 0);
  // An invalid row is measured too: it is not hidden behind a smaller job's ok row.
  const json big_invalid = result("203", 2, {"n0"}, {row("gemm", 1, "invalid", 1)});
  const auto m2 = merged_document(merge_results({in("small.json", small), in("bad.json", big_invalid)}, ctx()));
  EXPECT_EQ(m2["results"][0]["status"], "invalid");
  EXPECT_FALSE(m2["summary"]["valid"]);
}

TEST(Merge, EqualWorldsPreferTheLaterInput) {
  const json a = result("301", 2, {"n0"}, {row("gemm", 1, "ok", 1)});
  const json b = result("302", 2, {"n1"}, {row("gemm", 1, "ok", 2)});
  const auto m = merged_document(merge_results({in("a.json", a), in("b.json", b)}, ctx()));
  EXPECT_EQ(m["results"][0]["ranks"]["value"][0], 2.0);
  // The header is the first of the largest worlds; the other input's host is appended without ranks.
  EXPECT_EQ(m["hosts"][0]["name"], "n0");
  EXPECT_EQ(m["hosts"][1]["name"], "n1");
  EXPECT_EQ(m["hosts"][1]["ranks"], json::array());
}

TEST(Merge, UnreadableAndOtherBackendInputsAreNamedAndTheRestMerged) {
  const json good = result("401", 1, {"n0"}, {row("gemm", 1, "ok", 1)});
  const json cuda = result("402", 1, {"g0"}, {row("gemm", 1, "ok", 50)}, true, "cuda");
  const auto out = merge_results({{"missing.json", std::nullopt, "no such file"}, in("good.json", good), in("gpu.json", cuda)}, ctx());
  ASSERT_EQ(out.problems.size(), 2u);
  EXPECT_EQ(out.problems[0], "missing.json: no such file");
  EXPECT_NE(out.problems[1].find("gpu.json: measured with the cuda backend"), std::string::npos);
  const json m = merged_document(out);
  EXPECT_EQ(validate_result_json(m), "");
  EXPECT_EQ(m["merged_from"][0]["status"], "unreadable");
  EXPECT_EQ(m["merged_from"][2]["status"], "rejected");
  EXPECT_EQ(m["results"].size(), 1u);
  EXPECT_EQ(m["results"][0]["input"], 1);
  EXPECT_FALSE(m["summary"]["complete"]);  // the set lacks an input
  EXPECT_TRUE(m["summary"]["exit_code"].is_null());
}

TEST(Merge, NothingReadableIsAnError) {
  try {
    merge_results({{"a.json", std::nullopt, "not valid JSON"}, {"b.json", std::nullopt, "no such file"}}, ctx());
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "nothing to merge: no input could be read (a.json: not valid JSON; b.json: no such file)");
  }
}

TEST(Merge, InterruptedAndIncompleteInputsMakeTheSetIncomplete) {
  json cut = result("501", 2, {"n0"}, {row("gemm", 1, "ok", 1)}, false);
  cut["finished_utc"] = "2026-11-29T10:30:00Z";
  cut["summary"]["exit_code"] = 4;
  cut["summary"]["interrupted"] = "interrupted by SIGUSR1";
  const json whole = result("502", 1, {"n0"}, {row("gemm", 1, "ok", 2)});
  const auto m = merged_document(merge_results({in("cut.json", cut), in("whole.json", whole)}, ctx()));
  EXPECT_EQ(validate_result_json(m), "");
  EXPECT_FALSE(m["summary"]["complete"]);
  EXPECT_EQ(m["summary"]["interrupted"], "cut.json: interrupted by SIGUSR1");
  EXPECT_EQ(m["merged_from"][0]["interrupted"], "interrupted by SIGUSR1");
  EXPECT_EQ(m["merged_from"][0]["exit_code"], 4);
  // A run that never finished (no finished_utc) leaves the set unfinished.
  const json crashed = result("503", 1, {"n0"}, {}, false);
  EXPECT_TRUE(merged_document(merge_results({in("c.json", crashed), in("w.json", whole)}, ctx()))["finished_utc"].is_null());
}

TEST(Merge, EnvironmentKeepsOnlyWhatEveryInputAgreesOn) {
  const json a = result("601", 1, {"n0"}, {row("gemm", 1, "ok", 1)});
  const json b = result("602", 1, {"n0"}, {row("gemm", 1, "ok", 1, "fp32")});
  const auto m = merged_document(merge_results({in("a.json", a), in("b.json", b)}, ctx()));
  EXPECT_EQ(m["environment"], json({{"OMP_PROC_BIND", "close"}}));  // SLURM_JOB_ID differs
  EXPECT_EQ(m["plan"]["points"], 2);                                   // fp64 and fp32 are two points
  EXPECT_EQ(m["results"].size(), 2u);
  EXPECT_EQ(m["command_line"], json({"gpuscale", "merge", "-o", "m.json"}));
}

// A row the schema takes whose figures lie at the ends of the doubles: the aggregate DBL_MAX beside a
// group of 1e-300, so that group_summary's spread ((max - min) / median) is past the largest double.
// Merge writes it again (every summary recomputed): the file must still be one validate takes.
TEST(Merge, ExtremeFiguresStillMakeAValidFile) {
  auto rr = row("gemm", 1, "ok", 1e-300).get<ResultRow>();
  rr.aggregate = std::numeric_limits<double>::max();
  rr.groups = {RowGroup{{"n0"}, {0}, 1e-300, RowStatus::ok, 0, 0}};
  json r = rr;
  r["group_summary"]["spread"] = 1.0;  // as a file may say it: merge recomputes it
  const json a = result("701", 1, {"n0"}, {r});
  ASSERT_EQ(validate_result_json(a), "");
  const auto out = merge_results({in("a.json", a)}, ctx());
  const json m = merged_document(out);
  EXPECT_EQ(validate_result_json(m), "");
  EXPECT_TRUE(m["results"][0]["group_summary"]["spread"].is_number()) << m["results"][0]["group_summary"];
  EXPECT_EQ(m["results"][0]["group_summary"]["spread"], std::numeric_limits<double>::max());
  const std::string text = merged_result_text(out);  // what gpuscale merge writes, checked on the way
  EXPECT_NO_THROW(parse_result_text(text, "m.json"));
}

}  // namespace
}  // namespace gpuscale
