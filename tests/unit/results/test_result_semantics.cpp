// results/result_semantics: one test per relation a result file must keep with itself (issue 29). Each
// starts from a file that holds every relation (no contradiction), breaks one, and checks that the
// validator names it, and that a reader refuses the file with that first contradiction.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/error.h"
#include "result_doc.h"
#include "results/result_semantics.h"
#include "results/result_stream.h"

namespace gpuscale {
namespace {

using nlohmann::json;

SemanticReport check(const json& doc) {
  return stream_result_text(doc.dump(), "f.json", [](ResultRow&&, std::size_t) {}, Contradictions::report).semantics;
}

std::string all_of(const SemanticReport& r) {
  std::string out;
  for (const auto& c : r.found) out += c.text + "\n";
  return out;
}

// The validator names a contradiction containing `needle`, and a reader refuses the file with its first one.
void expect_named(const json& doc, const std::string& needle) {
  const auto r = check(doc);
  ASSERT_FALSE(r.empty()) << "nothing named; expected " << needle;
  EXPECT_NE(all_of(r).find(needle), std::string::npos) << "expected " << needle << " in\n" << all_of(r);
  try {
    stream_result_text(doc.dump(), "f.json", [](ResultRow&&, std::size_t) {});
    ADD_FAILURE() << "a reader took a file that contradicts itself: " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), refusal_line(r, "f.json"));
    EXPECT_EQ(std::string(e.what()).rfind("f.json: contradicts itself: " + r.found.front().text, 0), 0u) << e.what();
  }
}

json base() { return testing_doc::minimal_result_doc(); }
json& row0(json& doc) { return doc["results"][0]; }

// 4 ranks on n0 (0, 1) and n1 (2, 3), one pairs.sendrecv row at the job's size with its node matrix.
json fleet_doc() {
  json doc = base();
  doc["mpi"]["world_size"] = 4;
  doc["ranks"] = json::array();
  doc["hosts"] = json::array();
  for (int r = 0; r < 4; ++r) {
    auto entry = base()["ranks"][0];
    entry["rank"] = r;
    entry["host"] = r < 2 ? "n0" : "n1";
    entry["local_rank"] = r % 2;
    doc["ranks"].push_back(entry);
  }
  doc["hosts"] = {{{"name", "n0"}, {"node_index", 0}, {"cpu_model", "Test CPU"}, {"ranks", {0, 1}}},
                  {{"name", "n1"}, {"node_index", 1}, {"cpu_model", "Test CPU"}, {"ranks", {2, 3}}}};
  ResultRow r = testing_doc::sample_row();
  r.benchmark = "pairs.sendrecv";
  r.scope = "collective";
  r.params = {{"dtype", "fp32"}, {"size_bytes", 1024}};
  r.gpu_count = 4;
  r.nodes = 2;
  r.topology = "inter-node";
  r.ranks.clear();
  for (int k = 0; k < 4; ++k) {
    RankValue v;
    v.rank = k;
    v.host = k < 2 ? "n0" : "n1";
    v.device_index = 0;
    v.value = 5.0 + k;
    r.ranks.push_back(v);
  }
  r.matrices = json::array({{{"kind", "node"},
                             {"hosts", {"n0", "n1"}},
                             {"labels", {"n0", "n1"}},
                             {"ranks", {{0, 1}, {2, 3}}},
                             {"values", {{nullptr, 5.0}, {5.5, nullptr}}},
                             {"spread_down", {{nullptr, 0.01}, {0.02, nullptr}}},
                             {"spread_up", {{nullptr, 0.01}, {0.02, nullptr}}},
                             {"directed", false}}});
  doc["results"] = json::array({json(r)});
  doc["plan"]["benchmarks"] = {"pairs.sendrecv"};
  doc["plan"]["gpu_counts"] = {1, 2, 4};
  return doc;
}

// 2 ranks on node0 measured one at a time: two groups of 1 at gpu_count 1.
json tiled_doc() {
  json doc = base();
  ResultRow r = testing_doc::sample_row();
  r.gpu_count = 1;
  r.topology = "single";
  r.aggregate = r.ranks[0].value;
  for (int g = 0; g < 2; ++g) {
    RowGroup group;
    group.ranks = {g};
    group.hosts = {"node0"};
    group.value = r.ranks[static_cast<std::size_t>(g)].value;
    r.groups.push_back(group);
  }
  doc["results"] = json::array({json(r)});
  return doc;
}

TEST(ResultSemantics, FilesThatHoldEveryRelationHaveNoContradiction) {
  for (const auto& doc : {base(), fleet_doc(), tiled_doc()}) EXPECT_TRUE(check(doc).empty()) << all_of(check(doc));
}

// --- The summary tells what the rows say ---

TEST(ResultSemantics, SummaryValidAndExitZeroBesideAFailedRow) {
  json doc = base();
  row0(doc)["status"] = "failed";
  for (const char* k : {"aggregate", "scaling_efficiency", "fraction_of_peak"}) row0(doc)[k] = nullptr;
  row0(doc)["errors"] = {"rank 1 (node0): out of memory"};
  expect_named(doc, "/summary/valid is true, but a row is invalid or failed");
  expect_named(doc, "/summary/exit_code is 0, but the run is not valid");
}

TEST(ResultSemantics, SummaryCompleteWithAPlannedPointMissing) {
  json doc = base();
  doc["plan"]["point_list"] = {{{"benchmark", "stream.triad"}, {"params", row0(doc)["params"]}}};
  EXPECT_NE(all_of(check(doc)).find("planned point"), std::string::npos);  // gpu_counts {1, 2}: no row at 1
  doc["plan"]["gpu_counts"] = {2};
  EXPECT_TRUE(check(doc).empty()) << all_of(check(doc));
  doc["plan"]["gpu_counts"] = {1, 2};
  expect_named(doc, "/summary/complete is true, but planned point");
  doc["summary"]["complete"] = false;
  doc["summary"]["exit_code"] = nullptr;
  EXPECT_TRUE(check(doc).empty()) << all_of(check(doc));  // an unfinished run misses points
}

TEST(ResultSemantics, SummaryCountsThatDoNotMatchTheRows) {
  json doc = base();
  doc["summary"]["rows"] = 5;
  expect_named(doc, "/summary/rows is 5, but the file holds 1 rows");
  doc = base();
  doc["summary"]["skipped"] = 2;
  expect_named(doc, "/summary/skipped is 2, but 0 rows skipped");
}

TEST(ResultSemantics, ACompleteRunIsNotInterruptedAndHasFinished) {
  json doc = base();
  doc["summary"]["interrupted"] = "interrupted by SIGUSR1";
  expect_named(doc, "/summary/complete is true, but the run was interrupted");
  doc = base();
  doc["finished_utc"] = nullptr;
  expect_named(doc, "/summary/complete is true, but /finished_utc is null");
}

// --- A row's status against its content ---

TEST(ResultSemantics, AnOkRowWhoseEveryRankFailedItsCheck) {
  json doc = base();
  row0(doc)["ranks"]["valid"] = false;
  expect_named(doc, "/results/0: status ok, but every rank failed its check");
}

TEST(ResultSemantics, AnInvalidRowWithANumericAggregate) {
  json doc = base();
  row0(doc)["status"] = "invalid";
  row0(doc)["ranks"]["valid"] = {true, false};
  row0(doc)["errors"] = {"rank 1: 3 wrong values"};
  doc["summary"]["ok"] = 0;
  doc["summary"]["invalid"] = 1;
  doc["summary"]["valid"] = false;
  doc["summary"]["exit_code"] = 1;
  expect_named(doc, "/results/0: status invalid with an aggregate (203)");
  for (const char* k : {"aggregate", "scaling_efficiency", "fraction_of_peak"}) row0(doc)[k] = nullptr;
  EXPECT_TRUE(check(doc).empty()) << all_of(check(doc));
  row0(doc)["ranks"]["valid"] = true;
  expect_named(doc, "/results/0: status invalid, but every rank passed its check");
}

TEST(ResultSemantics, ASkippedRowWithValuesAndNoReason) {
  json doc = base();
  row0(doc)["status"] = "skipped";
  for (const char* k : {"aggregate", "scaling_efficiency", "fraction_of_peak"}) row0(doc)[k] = nullptr;
  doc["summary"]["ok"] = 0;
  doc["summary"]["skipped"] = 1;
  expect_named(doc, "/results/0: status skipped, but a rank has a value");
  expect_named(doc, "/results/0: status skipped without a reason");
}

// --- Ranks, hosts and groups ---

TEST(ResultSemantics, ARowPlacingRanksOnAHostTheHeaderNeverNames) {
  json doc = base();
  row0(doc)["ranks"]["hosts"] = {"ghost"};
  expect_named(doc, "/results: rows name 1 host that /hosts does not: ghost");
  expect_named(doc, "/results/0: rank 0 is on host ghost, but /ranks places it on node0");
}

TEST(ResultSemantics, HostsRanksThatDisagreeWithRanks) {
  json doc = base();
  doc["hosts"][0]["ranks"] = {0};
  expect_named(doc, "/hosts/0/ranks: host node0 lists 1 rank, but /ranks places 2 there");
}

TEST(ResultSemantics, TheHeaderListingARankTwice) {
  json doc = base();
  doc["ranks"][1]["rank"] = 0;
  expect_named(doc, "/ranks/1: rank 0 is listed twice");
}

TEST(ResultSemantics, NullsOnlyAnImportedFileMayLeave) {
  // The schema lets memory, free memory and the seed be null for files gpuscale import made; a run
  // gpuscale made has them, and names no "import" cluster source.
  json doc = base();
  doc["ranks"][1]["device"]["memory_bytes"] = nullptr;
  expect_named(doc, "/ranks/1/device/memory_bytes: null");
  doc = base();
  doc["ranks"][0]["device"]["free_memory_bytes"] = nullptr;
  expect_named(doc, "/ranks/0/device/free_memory_bytes: null");
  doc = base();
  doc["plan"]["seed"] = nullptr;
  expect_named(doc, "/plan/seed: null");
  doc = base();
  doc["cluster"]["source"] = "import";
  expect_named(doc, "/cluster/source");
  // The same nulls in an imported file are no contradiction.
  doc = base();
  doc["ranks"][1]["device"]["memory_bytes"] = nullptr;
  doc["plan"]["seed"] = nullptr;
  doc["cluster"]["source"] = "import";
  doc["imported"] = {{"inputs",
                      {{{"file", "n.txt"}, {"format", "nvbandwidth"}, {"tool", "nvbandwidth"}, {"tool_version", "v0.8"},
                        {"command_line", nullptr}, {"command_line_note", "not printed"}, {"started", nullptr}, {"rows", 1},
                        {"missing", json::array()}, {"notes", json::array()}}}}};
  EXPECT_EQ(all_of(check(doc)), "");
}

TEST(ResultSemantics, AWorldSizeThatDisagreesWithTheRanks) {
  json doc = base();
  doc["mpi"]["world_size"] = 3;
  expect_named(doc, "/mpi/world_size is 3, but /ranks lists 2 ranks");
}

TEST(ResultSemantics, GroupRanksOutsideTheRowOrTheWorld) {
  json doc = tiled_doc();
  row0(doc)["groups"]["ranks"] = {{0}, {5}};
  row0(doc)["groups"]["hosts"] = {{0}, {0}};
  expect_named(doc, "/results/0: group 1 holds rank 5, which the row does not list");
  expect_named(doc, "/results/0: rank 5 in a world of 2 ranks");
  EXPECT_TRUE(check(doc).unreadable);
}

TEST(ResultSemantics, GroupsOfKPlusOneRanksOrOverlapping) {
  json doc = tiled_doc();
  row0(doc)["groups"]["ranks"] = {{0, 1}, {1}};
  row0(doc)["groups"]["hosts"] = {{0}, {0}};
  expect_named(doc, "/results/0: group 0 has 2 ranks, not gpu_count 1");
  expect_named(doc, "/results/0: rank 1 is in group 0 and group 1");
}

TEST(ResultSemantics, IdleRanksThatMeasured) {
  json doc = tiled_doc();
  row0(doc)["idle_ranks"] = {1};
  expect_named(doc, "/results/0: idle rank 1 is one of the ranks that measured");
}

TEST(ResultSemantics, AGroupSummaryThatDisagreesWithTheGroups) {
  json doc = tiled_doc();
  row0(doc)["group_summary"]["count"] = 3;
  expect_named(doc, "/results/0: group_summary.count 3, but it has 2 groups");
  doc = tiled_doc();
  row0(doc)["group_summary"]["measured"] = 1;
  expect_named(doc, "/results/0: group_summary.measured 1, but 2 groups have a value");
}

TEST(ResultSemantics, ARowStatusThatIsNotItsGroups) {
  json doc = tiled_doc();
  row0(doc)["groups"]["status"] = {"ok", "invalid"};
  row0(doc)["groups"]["value"] = {100.0, nullptr};
  expect_named(doc, "/results/0: status ok, but its groups make it invalid");
}

TEST(ResultSemantics, AOneNodeRowClaimingNineNodesAndInterNode) {
  json doc = base();
  row0(doc)["nodes"] = 9;
  row0(doc)["topology"] = "inter-node";
  expect_named(doc, "/results/0: 9 nodes for a group of 2 GPUs");
  expect_named(doc, "/results/0: nodes 9, but its ranks are on 1 host");
  doc = base();
  row0(doc)["topology"] = "single";
  expect_named(doc, "/results/0: topology single for 2 GPUs on 1 node (expected intra-node)");
}

TEST(ResultSemantics, ARankOnTwoHostsOrTwoDevicesAcrossRows) {
  json doc = base();
  json other = row0(doc);
  other["params"]["dtype"] = "fp32";
  other["ranks"]["device_index"] = {3, 1};
  doc["results"].push_back(other);
  doc["summary"]["rows"] = doc["summary"]["ok"] = 2;
  expect_named(doc, "/results/1: rank 0 has device 3, but 0 in /results/0");
}

// --- Pair matrices ---

TEST(ResultSemantics, MatrixValuesThatAreNotMByM) {
  json doc = fleet_doc();
  row0(doc)["matrices"][0]["values"] = {{nullptr, 5.0}};  // (M - 1) x M
  expect_named(doc, "/results/0: matrices/0: values is not 2 x 2 (its members)");
  doc = fleet_doc();
  row0(doc)["matrices"][0]["values"].push_back({1.0, 2.0});  // (M + 1) x M
  expect_named(doc, "/results/0: matrices/0: values is not 2 x 2");
  doc = fleet_doc();
  row0(doc)["matrices"][0]["spread_up"] = {{nullptr, 0.01, 0.0}, {0.0, nullptr, 0.0}};
  expect_named(doc, "/results/0: matrices/0: spread_up is not 2 x 2");
}

TEST(ResultSemantics, MatrixMembersThatDoNotMatch) {
  json doc = fleet_doc();
  row0(doc)["matrices"][0]["labels"] = {"n0"};
  expect_named(doc, "/results/0: matrices/0: 1 labels for 2 members");
  doc = fleet_doc();
  row0(doc)["matrices"][0]["ranks"] = {{0, 2}, {1, 3}};
  expect_named(doc, "/results/0: matrices/0: member 0 is host n0, but its rank 2 is on n1");
  doc = fleet_doc();
  row0(doc)["matrices"][0]["hosts"] = {"n0", "n0"};
  expect_named(doc, "/results/0: matrices/0: host n0 is two members");
  doc = fleet_doc();
  row0(doc)["matrices"][0]["ranks"] = {{0, 1}, {2, 9}};
  expect_named(doc, "/results/0: matrices/0: member 1 holds rank 9, which the row does not list");
  expect_named(doc, "/results/0: rank 9 in a world of 4 ranks");
}

TEST(ResultSemantics, AMatrixOfMoreNodesThanTheFileHas) {
  // A 300 x 300 matrix of nulls over hosts no header names, in a file of 2 hosts.
  json doc = fleet_doc();
  auto& m = row0(doc)["matrices"][0];
  const std::size_t n = 300;
  m["hosts"] = m["labels"] = json::array();
  for (std::size_t i = 0; i < n; ++i) m["hosts"].push_back(fmt::format("x{}", i));
  m["labels"] = m["hosts"];
  m.erase("ranks");
  m["values"] = m["spread_down"] = m["spread_up"] = json(n, json(n, nullptr));
  expect_named(doc, "/results/0: a pair matrix of 300 nodes in a file of 2 hosts");
  expect_named(doc, "/results: rows name 300 hosts that /hosts does not: x0, x1, x10, ...");
}

// --- Plan and analysis ---

TEST(ResultSemantics, ARowWhoseBenchmarkIsNotInThePlan) {
  json doc = base();
  doc["plan"]["benchmarks"] = {"stream.copy"};
  expect_named(doc, "/results/0: benchmark stream.triad is not in /plan/benchmarks");
}

TEST(ResultSemantics, TheSamePointTwiceOr200Times) {
  json doc = base();
  for (int i = 0; i < 199; ++i) doc["results"].push_back(row0(doc));
  doc["summary"]["rows"] = doc["summary"]["ok"] = 200;
  const auto r = check(doc);
  EXPECT_EQ(r.total, 199u) << all_of(r);
  expect_named(doc, "/results/1: the same benchmark, params and gpu_count as /results/0");
  expect_named(doc, "/results/199: the same benchmark, params and gpu_count as /results/0");
}

TEST(ResultSemantics, AnEmptyPointListWithRows) {
  json doc = base();
  doc["plan"]["point_list"] = json::array();
  doc["plan"]["points"] = 0;
  expect_named(doc, "/results/0: its benchmark and params are not in /plan/point_list");
}

TEST(ResultSemantics, AGpuCountThePlanDoesNotHave) {
  json doc = base();
  doc["plan"]["gpu_counts"] = {1};
  doc["mpi"]["world_size"] = 2;
  row0(doc)["gpu_count"] = 2;  // the world's size is always a count
  EXPECT_TRUE(check(doc).empty()) << all_of(check(doc));
  doc = fleet_doc();
  doc["plan"]["gpu_counts"] = {1, 4};
  row0(doc)["gpu_count"] = 2;
  row0(doc)["ranks"]["rank"] = {0, 1, 2, 3};
  expect_named(doc, "/results/0: gpu_count 2 is not one of /plan/gpu_counts");
}

TEST(ResultSemantics, StragglersNamingARankOutsideTheWorldOrARowThatIsNot) {
  json doc = base();
  json straggler = {{"benchmark", "stream.triad"}, {"params", row0(doc)["params"]}, {"gpu_count", 2}, {"rank", 99},
                    {"host", "node0"}, {"device_index", 0}, {"uuid", "-"}, {"pci_bus_id", "-"}, {"value", 1.0},
                    {"median", 2.0}, {"deficit", 0.5}, {"unit", "GB/s"}};
  doc["analysis"] = {{"straggler_threshold", 0.1}, {"stragglers", {straggler}}};
  expect_named(doc, "/analysis/stragglers/0: rank 99 in a world of 2");
  doc["analysis"]["stragglers"][0]["rank"] = 1;
  EXPECT_TRUE(check(doc).empty()) << all_of(check(doc));
  doc["analysis"]["stragglers"][0]["gpu_count"] = 1;
  expect_named(doc, "/analysis/stragglers/0: no row of that benchmark, params and gpu_count");
  doc["analysis"]["stragglers"][0]["gpu_count"] = 2;
  doc["analysis"]["outlier_hosts"] = {"nowhere"};
  expect_named(doc, "/analysis/outlier_hosts: host nowhere is not in /hosts");
}

// --- Times and attempts ---

TEST(ResultSemantics, ATimestampOffTheCalendar) {
  json doc = base();
  doc["created_utc"] = "2026-13-02T99:04:05Z";
  expect_named(doc, "/created_utc: 2026-13-02T99:04:05Z is not a time on the calendar");
  doc = base();
  doc["finished_utc"] = "2026-02-30T03:04:05Z";
  expect_named(doc, "/finished_utc: 2026-02-30T03:04:05Z is not a time on the calendar");
  doc = base();
  doc["finished_utc"] = "2025-01-02T03:04:05Z";
  expect_named(doc, "/finished_utc 2025-01-02T03:04:05Z is before /created_utc");
}

TEST(ResultSemantics, ARowOfAnAttemptTheFileDoesNotRecord) {
  json doc = base();
  row0(doc)["attempt"] = 2;
  expect_named(doc, "/results/0: attempt 2, but the file records 0 earlier attempts");
}

// --- Figures no reader can use: refused even with --lenient ---

TEST(ResultSemantics, FiguresNoReaderCanUseAreUnreadable) {
  json doc = base();
  row0(doc)["metrics"]["time_us"] = -3.5;
  expect_named(doc, "/results/0/metrics/time_us must be a non-negative number");
  EXPECT_TRUE(check(doc).unreadable);
  doc = base();
  row0(doc)["ranks"]["metrics"]["time_us"] = {1.0, -2.0};  // rank 1's entry
  expect_named(doc, "/results/0/ranks (rank 1)/metrics/time_us must be a non-negative number");
  doc = base();
  row0(doc)["ranks"]["rank"] = {0, 0};
  expect_named(doc, "/results/0: rank 0 is listed twice");
  doc = base();
  row0(doc)["gpu_count"] = 64;
  expect_named(doc, "/results/0: gpu_count 64 in a world of 2 ranks");
  doc = base();
  row0(doc)["ranks"]["rank"] = {0, 7};
  expect_named(doc, "/results/0: rank 7 in a world of 2 ranks");
  EXPECT_TRUE(check(doc).unreadable);
  // An ok row at k GPUs lists every one of them; a failed one may list fewer (a rank that never started).
  doc = base();
  {
    ResultRow one = testing_doc::sample_row();
    one.ranks.resize(1);
    row0(doc) = one;
  }
  expect_named(doc, "/results/0: an ok row at 2 GPUs lists 1 rank");
  row0(doc)["status"] = "failed";
  row0(doc)["ranks"]["valid"] = false;
  row0(doc)["errors"] = {"rank 1 did not start"};
  for (const char* k : {"aggregate", "scaling_efficiency", "fraction_of_peak"}) row0(doc)[k] = nullptr;
  doc["summary"] = {{"complete", false}, {"valid", false}, {"rows", 1}, {"ok", 0}, {"invalid", 0},
                    {"failed", 1},       {"skipped", 0},   {"exit_code", nullptr}};
  EXPECT_TRUE(check(doc).empty()) << all_of(check(doc));
}

TEST(ResultSemantics, ValidateCountsPastTheOnesItKeeps) {
  json doc = base();
  const std::size_t copies = SemanticReport::kKept + 50;
  for (std::size_t i = 1; i < copies; ++i) doc["results"].push_back(row0(doc));
  doc["summary"]["rows"] = doc["summary"]["ok"] = copies;
  const auto r = check(doc);
  EXPECT_EQ(r.total, copies - 1);
  EXPECT_EQ(r.found.size(), SemanticReport::kKept);
  EXPECT_EQ(r.untrusted_rows.size(), copies - 1);
}

}  // namespace
}  // namespace gpuscale
