// harness/resume: recorded options round-trip and are adopted when not given (refused when given
// differently); a file is checked against the launch (backend, ranks, nodes, devices) and split into the
// points kept (valid at every GPU count) and those measured again; rows come back in plan order.
#include <gtest/gtest.h>

#include "core/error.h"
#include "harness/run/resume.h"
#include "result_doc.h"
#include "results/result_io.h"

namespace gpuscale {
namespace {

using nlohmann::json;

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

RunOptions sample_options() {
  RunOptions o;
  o.quick = true;
  o.benchmarks = {"stream", "all_reduce"};
  o.dtypes = {DType::fp64, DType::fp32};
  o.max_bytes = 1 << 20;
  o.reps = 7;
  o.warmup = 0;
  o.ops = {RedOp::sum, RedOp::max};
  o.in_place = {true};
  o.gemm_shapes = {parse_gemm_shape("512"), parse_gemm_shape("64x32x16:TN")};
  o.backend_options.threads = 2;
  o.time_reduce = "max";
  o.watchdog_s = 30;
  return o;
}

// A result of `world` ranks (2 per host) with one row per (point, GPU count) of `statuses`.
json run_doc(int world, const std::vector<std::vector<std::string>>& statuses, const RunOptions& o = sample_options()) {
  json d = testing_doc::minimal_result_doc();
  d["mpi"]["world_size"] = world;
  d["ranks"] = json::array();
  d["hosts"] = json::array();
  for (int r = 0; r < world; ++r) {
    json rank = testing_doc::minimal_result_doc()["ranks"][0];
    rank["rank"] = r;
    rank["host"] = "node" + std::to_string(r / 2);
    d["ranks"].push_back(rank);
    if (r % 2 == 0) d["hosts"].push_back({{"name", rank["host"]}, {"node_index", r / 2}, {"cpu_model", "x"}, {"ranks", {r, r + 1}}});
  }
  std::vector<int> counts;
  for (int k = 1; k < world; k *= 2) counts.push_back(k);
  counts.push_back(world);
  d["plan"]["gpu_counts"] = counts;
  d["plan"]["options"] = plan_options_json(o);
  d["plan"]["seed"] = 777;
  json list = json::array();
  d["results"] = json::array();
  for (std::size_t p = 0; p < statuses.size(); ++p) {
    const json params = {{"dtype", "fp64"}, {"elements", 1000 + p}};
    list.push_back({{"benchmark", "stream.triad"}, {"params", params}});
    for (std::size_t i = 0; i < statuses[p].size() && i < counts.size(); ++i) {
      if (statuses[p][i] == "-") continue;  // no row
      // A row measured on counts[i] ranks lists each of them (as every reader checks).
      ResultRow measured = testing_doc::sample_row();
      measured.ranks.resize(1);
      for (int r = 1; r < counts[i]; ++r) {
        measured.ranks.push_back(measured.ranks.front());
        measured.ranks.back().rank = r;
        measured.ranks.back().host = "node" + std::to_string(r / 2);
      }
      json row = measured;
      row["params"] = params;
      row["gpu_count"] = counts[i];
      row["status"] = statuses[p][i];
      row["attempt"] = 0;
      d["results"].push_back(row);
    }
  }
  d["plan"]["points"] = list.size();
  d["plan"]["point_list"] = list;
  d["summary"]["complete"] = false;
  d["summary"]["exit_code"] = 6;
  d["summary"]["interrupted"] = "rank 3 (node1, pid 9) was lost";
  EXPECT_EQ(validate_result_json(d), "");
  return d;
}

LaunchShape launch(int world, std::string backend = "cpu") {
  LaunchShape l{std::move(backend), {}, {}};
  for (int r = 0; r < world; ++r) {
    l.hosts.push_back("other" + std::to_string(r / 2));  // other nodes, the same shape: allowed
    l.devices.push_back("Test CPU");
  }
  return l;
}

TEST(ResumeOptions, RecordedOptionsComeBack) {
  const RunOptions o = sample_options();
  const json doc = run_doc(4, {{"ok", "ok", "ok"}}, o);
  RunOptions fresh;  // nothing given: everything from the file
  const RunOptions got = adopt_recorded_options(doc, fresh, "r.json");
  json expected = plan_options_json(o);
  expected["watchdog_s"] = nullptr;  // labels are not adopted
  EXPECT_EQ(plan_options_json(got), expected);
  EXPECT_EQ(got.backend, "cpu");
  EXPECT_EQ(got.seed, 777u);
  EXPECT_EQ(got.gemm_shapes[1].trans_a, true);
  EXPECT_TRUE(got.gemm_shapes[1].layout_given);
  EXPECT_FALSE(got.gemm_shapes[0].layout_given);
  // Every recorded key has a flag, and the shaping ones are all recorded.
  const auto flags = recorded_option_flags();
  const json recorded = plan_options_json(o);  // a named object: items() of a temporary would dangle
  for (const auto& [key, value] : recorded.items())
    EXPECT_TRUE(std::any_of(flags.begin(), flags.end(), [&](const auto& f) { return f.first == key; })) << key;
}

TEST(ResumeOptions, GivenOptionsMustMatch) {
  const json doc = run_doc(4, {{"ok", "ok", "ok"}});
  RunOptions o;
  o.reps = 7;
  o.given = {"reps"};
  EXPECT_EQ(adopt_recorded_options(doc, o, "r.json").reps, 7);  // the same: fine
  o.reps = 9;
  EXPECT_EQ(refusal([&] { adopt_recorded_options(doc, o, "r.json"); }),
            "--resume r.json: --reps is 9 on this command line but 7 in the file; resume with the file's options (or "
            "leave --reps out)");
  o = RunOptions{};
  o.backend = "cuda";
  o.given = {"backend"};
  EXPECT_EQ(refusal([&] { adopt_recorded_options(doc, o, "r.json"); }),
            "--resume r.json: the file was measured with the cpu backend, not --backend cuda");
  o = RunOptions{};
  o.seed = 5;
  EXPECT_NE(refusal([&] { adopt_recorded_options(doc, o, "r.json"); }).find("--seed 5 differs from the file's seed 777"),
            std::string::npos);
  o = RunOptions{};
  o.watchdog_s = 5;  // a label: a resumed run may set it anew
  o.given = {"watchdog_s"};
  EXPECT_EQ(adopt_recorded_options(doc, o, "r.json").watchdog_s, 5.0);
}

TEST(ResumeOptions, MalformedRecordedValuesAreRefused) {
  const std::vector<std::pair<std::string, json>> bad = {
      {"reps", -3}, {"reps", "7"}, {"dtypes", {"fp99"}}, {"dtypes", "fp64"}, {"max_bytes", 0}, {"ops", {"xor"}},
      {"placements", {"sideways"}}, {"skews", {"zipf:0"}}, {"skews", "uniform"}, {"layouts", {"tp=0"}}, {"layouts", "dp"}, {"layers", 0}, {"gemm_shapes", {"1x2"}}, {"time_reduce", "median"}, {"quick", 1}, {"threads", 1e10}};
  for (const auto& [key, value] : bad) {
    json doc = run_doc(2, {{"ok", "ok"}});
    doc["plan"]["options"][key] = value;
    const auto why = refusal([&] { adopt_recorded_options(doc, RunOptions{}, "r.json"); });
    EXPECT_NE(why.find("plan.options." + key + " is "), std::string::npos) << key << ": " << why;
  }
  json doc = run_doc(2, {{"ok", "ok"}});
  doc["plan"]["options"].erase("reps");
  EXPECT_NE(refusal([&] { adopt_recorded_options(doc, RunOptions{}, "r.json"); }).find("lacks \"reps\""), std::string::npos);
}

TEST(ResumePlanTest, KeepsOnlyPointsValidAtEveryGpuCount) {
  // Points: all ok; one count missing; one invalid; skipped counts as valid; one failed; no rows at all.
  const json doc = run_doc(4, {{"ok", "ok", "ok"},
                               {"ok", "ok", "-"},
                               {"ok", "invalid", "ok"},
                               {"skipped", "ok", "skipped"},
                               {"failed", "ok", "ok"},
                               {"-", "-", "-"}});
  const auto r = plan_resume(doc, launch(4), "r.json");
  EXPECT_EQ(r.done, (std::vector<bool>{true, false, false, true, false, false}));
  EXPECT_EQ(r.remaining(), 4u);
  EXPECT_EQ(r.kept_rows.size(), 6u);  // the rows of points 0 and 3, unchanged
  for (const auto& row : r.kept_rows) EXPECT_TRUE(row["params"]["elements"] == 1000 || row["params"]["elements"] == 1003);
  EXPECT_EQ(r.plan["seed"], 777);
  EXPECT_EQ(r.plan["points"], doc["plan"]["point_list"]);
  EXPECT_EQ(r.attempt, 1);
  ASSERT_EQ(r.attempts.size(), 1u);
  EXPECT_EQ(r.attempts[0]["summary"]["exit_code"], 6);
  EXPECT_EQ(r.attempts[0]["hosts"], json({"node0", "node1"}));
  // A second resume counts on.
  json again = doc;
  again["attempts"] = r.attempts;
  EXPECT_EQ(plan_resume(again, launch(4), "r.json").attempt, 2);
}

TEST(ResumePlanTest, RefusesAnotherLaunch) {
  const json doc = run_doc(4, {{"ok", "ok", "ok"}});
  EXPECT_NE(refusal([&] { plan_resume(doc, launch(4, "cuda"), "r.json"); }).find("measured with the cpu backend, this run opened cuda"),
            std::string::npos);
  EXPECT_NE(refusal([&] { plan_resume(doc, launch(8), "r.json"); }).find("measured by 4 ranks, this launch has 8"),
            std::string::npos);
  auto one_node = launch(4);
  one_node.hosts = {"n", "n", "n", "n"};
  EXPECT_NE(refusal([&] { plan_resume(doc, one_node, "r.json"); }).find("ran 2+2 per node (2 node(s)), this launch's 4 (1 node(s))"),
            std::string::npos);
  auto other_gpu = launch(4);
  other_gpu.devices[3] = "Other CPU";
  EXPECT_NE(refusal([&] { plan_resume(doc, other_gpu, "r.json"); }).find("rank 3 measured a Test CPU in the file but has a Other CPU now"),
            std::string::npos);
}

TEST(ResumePlanTest, RefusesInconsistentFiles) {
  auto check = [](json doc, const std::string& needle) {
    const auto why = refusal([&] { plan_resume(doc, launch(4), "r.json"); });
    EXPECT_NE(why.find(needle), std::string::npos) << why;
  };
  json doc = run_doc(4, {{"ok", "ok", "ok"}, {"ok", "-", "-"}});
  json d = doc;
  d["merged_from"] = json::array();
  check(d, "merged result set");
  d = doc;
  d["plan"]["point_list"].erase(1);
  check(d, "does not list its planned points");
  d = doc;
  d["plan"].erase("point_list");
  check(d, "does not list its planned points");
  d = doc;
  d["plan"]["point_list"][1] = d["plan"]["point_list"][0];
  check(d, "holds point 1 twice");
  // A row outside the plan, at a count the plan lacks, or twice: the semantic validator refuses the
  // file before the resume plan is made (tests/unit/results/test_result_semantics.cpp).
  d = doc;
  d["plan"]["gpu_counts"] = {1, 4};
  check(d, "not the GPU counts of 4 ranks");
  d = doc;
  d["ranks"][3]["rank"] = 1;
  check(d, "not 0 .. world size - 1");
  d = doc;
  d["plan"]["point_list"][0]["params"] = "x";
  check(d, "not {benchmark, params}");
}

// The fleet benchmarks' points have one row, at the job's full size: the list the run writes marks them
// (whole_job), so a resume of a complete file measures nothing again (it measured pairs and gpu_pairs
// a second time when the mark was dropped).
TEST(ResumePlanTest, AWholeJobPointTheRunWroteIsDone) {
  json doc = run_doc(4, {{"-", "-", "ok"}, {"ok", "ok", "ok"}, {"-", "-", "failed"}});
  json points = doc["plan"]["point_list"];
  points[0]["whole_job"] = points[2]["whole_job"] = true;
  doc["plan"]["point_list"] = point_list({{"points", points}});  // as run_metadata.cpp writes the plan
  EXPECT_EQ(validate_result_json(doc), "");
  const auto r = plan_resume(doc, launch(4), "r.json");
  EXPECT_EQ(r.done, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(r.remaining(), 1u);  // the failed fleet point alone
  EXPECT_EQ(r.kept_rows.size(), 4u);
}

// A file written before the list kept the mark: the registry's rule (here a stand-in) says which
// benchmarks measure once at the full size, so its complete fleet points are not measured again either.
TEST(ResumePlanTest, AWholeJobPointOfAnOlderFileIsDoneByTheRule) {
  json doc = run_doc(4, {{"-", "-", "ok"}, {"ok", "ok", "ok"}});
  doc["plan"]["point_list"][0]["benchmark"] = "pairs";
  doc["results"][0]["benchmark"] = "pairs";
  EXPECT_EQ(plan_resume(doc, launch(4), "r.json").done, (std::vector<bool>{false, true}));  // without the rule
  const auto r = plan_resume(doc, launch(4), "r.json", [](const std::string& b) { return b == "pairs"; });
  EXPECT_EQ(r.done, (std::vector<bool>{true, true}));
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(ResumePlanTest, RowsInPlanOrder) {
  const json list = {{{"benchmark", "a"}, {"params", {{"x", 1}}}}, {{"benchmark", "b"}, {"params", json::object()}}};
  json rows = {{{"benchmark", "b"}, {"params", json::object()}, {"gpu_count", 2}},
               {{"benchmark", "a"}, {"params", {{"x", 1}}}, {"gpu_count", 2}},
               {{"benchmark", "b"}, {"params", json::object()}, {"gpu_count", 1}},
               {{"benchmark", "a"}, {"params", {{"x", 1}}}, {"gpu_count", 1}}};
  order_rows_by_plan(rows, list);
  std::vector<std::string> order;
  for (const auto& r : rows) order.push_back(r["benchmark"].get<std::string>() + std::to_string(r["gpu_count"].get<int>()));
  EXPECT_EQ(order, (std::vector<std::string>{"a1", "a2", "b1", "b2"}));
  EXPECT_EQ(point_list({{"points", {{{"benchmark", "a"}, {"params", json::object()}, {"extra", 1}}}}}),
            json({{{"benchmark", "a"}, {"params", json::object()}}}));
}

}  // namespace
}  // namespace gpuscale
