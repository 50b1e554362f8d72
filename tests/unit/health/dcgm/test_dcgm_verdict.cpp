// DCGM's results as checks of each GPU's verdict (health/dcgm/dcgm_verdict.h): a failed GPU FAILs with
// DCGM's words, a monitor-only "Fail" and "Warn" WARN, "Skip" is a note and never a pass, GPUs matched
// by serial number or index (and said which), a GPU DCGM left out is a finding, and every way the
// program's outcome cannot be read is one reason.
#include <gtest/gtest.h>

#include <random>

#include "test_seed.h"

#include "core/error.h"
#include "health/dcgm/dcgm_verdict.h"
#include "dcgm_doc_builder.h"

namespace gpuscale::health {
namespace {

using test::PlantedResult;

std::vector<GpuIdentity> node(int n, bool serials) {
  std::vector<GpuIdentity> out;
  for (int i = 0; i < n; ++i) {
    GpuIdentity g;
    g.index = i;
    g.uuid = "GPU-" + std::to_string(i);
    if (serials) g.serial = "SN" + std::to_string(1000 + i);
    out.push_back(g);
  }
  return out;
}

ProgramRun exited(int status, const std::string& out) {
  ProgramRun r;
  r.started = true;
  r.exit_status = status;
  r.out = out;
  return r;
}

DcgmRequest r2() { return {2, 900, "dcgmi"}; }

// Under the built-in rules (health/thresholds/default.json's "dcgm").
DcgmOutcome judge(const DcgmRequest& req, const std::string& program, const ProgramRun& run,
                  const std::vector<GpuIdentity>& gpus) {
  return judge_dcgm_run(req, program, run, gpus, builtin_thresholds().dcgm);
}

// Every GPU passes memory and pcie, except `bad`, whose memory result is `status` with `warnings`.
std::string doc_with(int n, int bad, const std::string& status, std::vector<nlohmann::json> warnings,
                     std::map<int, std::string> serials = {}, std::vector<std::string> info = {}) {
  std::vector<PlantedResult> res;
  std::vector<int> ids;
  for (int g = 0; g < n; ++g) {
    ids.push_back(g);
    res.push_back({"Integration", "pcie", g, "Pass", {}, {}});
    res.push_back(g == bad ? PlantedResult{"Hardware", "memory", g, status, warnings, info}
                           : PlantedResult{"Hardware", "memory", g, "Pass", {}, {}});
  }
  return test::dcgm4_doc(res, ids, serials).dump();
}

TEST(DcgmVerdict, FailedGpuFailsWithDcgmsWordsOthersPass) {
  std::mt19937_64 rng(test_seed());
  for (int round = 0; round < 10; ++round) {
    const int n = 2 + static_cast<int>(rng() % 7), bad = static_cast<int>(rng() % n);
    const auto text = "Found " + std::to_string(1 + rng() % 64) + " faulty memory elements on GPU " + std::to_string(bad);
    const auto o = judge(r2(), "/usr/bin/dcgmi",
                                  exited(205, doc_with(n, bad, "Fail", {test::dcgm_warning(text, 52, 10, 2)})),
                                  node(n, false));
    ASSERT_FALSE(o.problem) << *o.problem;
    ASSERT_EQ(o.gpus.size(), static_cast<std::size_t>(n));
    for (int g = 0; g < n; ++g) {
      const auto& v = o.gpus[static_cast<std::size_t>(g)].verdict;
      if (g == bad) {
        ASSERT_EQ(v.severity, Severity::fail);
        EXPECT_EQ(v.findings.at(0).check, "dcgm");
        EXPECT_EQ(v.findings.at(0).message, "DCGM r2 memory: " + text + " (DCGM error 52)");
        EXPECT_EQ(o.gpus[static_cast<std::size_t>(g)].failed, 1);
      } else {
        EXPECT_EQ(v.severity, Severity::pass) << v.line();
        EXPECT_EQ(o.gpus[static_cast<std::size_t>(g)].passed, 2);
      }
    }
    EXPECT_EQ(o.matched_by, "index (DCGM gives no serial number for every GPU)");
    EXPECT_TRUE(o.node.findings.empty());  // exit 205 is what dcgmi does when a test fails
  }
}

TEST(DcgmVerdict, MonitorOnlyFailAndWarnAreWarnings) {
  const auto monitor = test::dcgm_warning("There were thermal violations totaling 12.5 seconds for GPU 1", 40, 9, 1);
  auto o = judge(r2(), "dcgmi", exited(226, doc_with(2, 1, "Fail", {monitor})), node(2, false));
  EXPECT_EQ(o.gpus[1].verdict.severity, Severity::warn);
  EXPECT_EQ(o.gpus[1].warned, 1);
  // One isolate-class warning beside it makes it a failure.
  o = judge(r2(), "dcgmi",
                     exited(205, doc_with(2, 1, "Fail", {monitor, test::dcgm_warning("x", 52, 10, 2)})), node(2, false));
  EXPECT_EQ(o.gpus[1].verdict.severity, Severity::fail);
  // A Fail with no warning at all fails, and says DCGM gave no reason.
  o = judge(r2(), "dcgmi", exited(226, doc_with(2, 0, "Fail", {})), node(2, false));
  EXPECT_EQ(o.gpus[0].verdict.line(), "FAIL: DCGM r2 memory: Fail (DCGM gives no reason)");
  o = judge(r2(), "dcgmi", exited(0, doc_with(2, 0, "Warn", {monitor})), node(2, false));
  EXPECT_EQ(o.gpus[0].verdict.severity, Severity::warn);
}

// The severities are the thresholds file's "dcgm" rules: each one, changed, changes the verdict.
TEST(DcgmVerdict, ThresholdsFileSetsTheSeverities) {
  const auto monitor = test::dcgm_warning("There were thermal violations totaling 12.5 seconds for GPU 1", 40, 9, 1);
  const auto isolate = test::dcgm_warning("Found 2 faulty memory elements on GPU 1", 52, 10, 2);
  const auto t = parse_thresholds(R"({"dcgm": {"fail": "warn", "fail_monitor_only": "fail", "warn": "ignore",
                                      "gpu_without_result": "fail", "exit_without_failure": "ignore"}})",
                                  "test");
  auto o = judge_dcgm_run(r2(), "dcgmi", exited(205, doc_with(2, 1, "Fail", {isolate})), node(2, false), t.dcgm);
  EXPECT_EQ(o.gpus[1].verdict.severity, Severity::warn);
  o = judge_dcgm_run(r2(), "dcgmi", exited(226, doc_with(2, 1, "Fail", {monitor})), node(2, false), t.dcgm);
  EXPECT_EQ(o.gpus[1].verdict.severity, Severity::fail);
  o = judge_dcgm_run(r2(), "dcgmi", exited(0, doc_with(2, 1, "Warn", {monitor})), node(2, false), t.dcgm);
  EXPECT_EQ(o.gpus[1].verdict.severity, Severity::pass);
  o = judge_dcgm_run(r2(), "dcgmi", exited(226, doc_with(1, -1, "Pass", {})), node(2, false), t.dcgm);
  EXPECT_EQ(o.gpus[1].verdict.severity, Severity::fail);  // DCGM gave GPU 1 no result
  EXPECT_EQ(o.node.severity, Severity::pass);             // exit 226 with nothing failed: ignored
  EXPECT_EQ(builtin_thresholds().dcgm.fail, Severity::fail);
  EXPECT_EQ(builtin_thresholds().dcgm.fail_monitor_only, Severity::warn);
  EXPECT_EQ(builtin_thresholds().dcgm.gpu_without_result, Severity::warn);
  try {
    parse_thresholds(R"({"dcgm": {"fial": "warn"}})", "test");
    ADD_FAILURE() << "a misspelt dcgm key was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dcgm.fial: unknown key"), std::string::npos) << e.what();
  }
}

// DCGM 3.x's r1: software tests only, results naming no GPU: read (not "no result"), a failure on the
// node as a whole, no GPU left out.
TEST(DcgmVerdict, Dcgm3SoftwareOnlyRunJudgesTheNode) {
  const auto doc = R"({"DCGM GPU Diagnostic": {"test_categories": [{"category": "Deployment", "tests": [
      {"name": "Denylist", "results": [{"status": "Pass"}]},
      {"name": "Environment Variables", "results": [{"gpu_id": -1, "status": "Fail",
        "warnings": [{"warnings": "Found CUDA performance-limiting environment variable 'CUDA_LAUNCH_BLOCKING'.",
                      "error_id": 28, "error_category": 6, "error_severity": 5}]}]}]}]}})";
  const auto o = judge(DcgmRequest{1, 300, "dcgmi"}, "dcgmi", exited(226, doc), node(2, false));
  ASSERT_FALSE(o.problem) << *o.problem;
  EXPECT_EQ(o.node.severity, Severity::fail);
  EXPECT_EQ(o.node.line(),
            "FAIL: DCGM r1 Environment Variables: Found CUDA performance-limiting environment variable "
            "'CUDA_LAUNCH_BLOCKING'. (DCGM error 28)");
  for (const auto& g : o.gpus) EXPECT_EQ(g.verdict.severity, Severity::pass) << g.verdict.line();
}

TEST(DcgmVerdict, SkipIsANoteNotAPass) {
  const auto o = judge(r2(), "dcgmi",
                                exited(0, doc_with(2, 1, "Skip", {}, {}, {"Test memory skipped: not supported"})),
                                node(2, false));
  const auto& g = o.gpus[1];
  EXPECT_EQ(g.verdict.severity, Severity::pass);
  EXPECT_TRUE(g.verdict.findings.empty());
  EXPECT_EQ(g.skipped, 1);
  EXPECT_EQ(g.passed, 1);
  ASSERT_EQ(g.verdict.notes.size(), 1u);
  EXPECT_EQ(g.verdict.notes[0], "DCGM r2 memory skipped: Test memory skipped: not supported");
  EXPECT_EQ(dcgm_line_part(2, g), " [DCGM r2: 1 Pass, 1 Skip]");
  for (const auto& t : g.tests) EXPECT_EQ(t["status"], t["test"] == "memory" ? "Skip" : "Pass") << t.dump();
}

TEST(DcgmVerdict, MatchesBySerialNumberWhenDcgmGivesThem) {
  std::mt19937_64 rng(test_seed());
  const int n = 4;
  auto ours = node(n, true);
  // DCGM numbers the GPUs in another order than NVML: its id k is our GPU perm[k].
  std::vector<int> perm{0, 1, 2, 3};
  std::shuffle(perm.begin(), perm.end(), rng);
  std::map<int, std::string> serials;
  for (int k = 0; k < n; ++k) serials[k] = *ours[static_cast<std::size_t>(perm[static_cast<std::size_t>(k)])].serial;
  const int bad_dcgm = static_cast<int>(rng() % n);
  const auto o = judge(r2(), "dcgmi",
                                exited(205, doc_with(n, bad_dcgm, "Fail", {test::dcgm_warning("bad", 52, 10, 2)}, serials)),
                                ours);
  EXPECT_EQ(o.matched_by, "serial number");
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(o.gpus[static_cast<std::size_t>(i)].verdict.severity,
              i == perm[static_cast<std::size_t>(bad_dcgm)] ? Severity::fail : Severity::pass) << "our GPU " << i;
  // Serials that repeat on the node (a fake, a bad inventory) cannot match: by index, and said so.
  for (auto& g : ours) g.serial = "SAME";
  const auto by_index = judge(r2(), "dcgmi", exited(0, doc_with(n, -1, "Pass", {}, serials)), ours);
  EXPECT_EQ(by_index.matched_by, "index (the GPUs' serial numbers are not unique on this node)");
}

TEST(DcgmVerdict, GpuDcgmLeftOutIsAFindingAndForeignGpuANote) {
  // DCGM tested GPUs 0 and 2 of a node whose NVML shows 0 and 1.
  std::vector<PlantedResult> res = {{"Hardware", "memory", 0, "Pass", {}, {}}, {"Hardware", "memory", 2, "Pass", {}, {}}};
  const auto o = judge(r2(), "dcgmi", exited(0, test::dcgm4_doc(res, {0, 2}, {}).dump()), node(2, false));
  ASSERT_FALSE(o.problem);
  EXPECT_EQ(o.gpus[0].verdict.severity, Severity::pass);
  EXPECT_EQ(o.gpus[1].verdict.severity, Severity::warn);
  EXPECT_NE(o.gpus[1].verdict.line().find("DCGM r2 reported no result for this GPU (DCGM's GPU ids: 0, 2"),
            std::string::npos) << o.gpus[1].verdict.line();
  ASSERT_EQ(o.node.notes.size(), 1u);
  EXPECT_NE(o.node.notes[0].find("GPU id 2 that matches none"), std::string::npos) << o.node.notes[0];
  EXPECT_EQ(o.summary["unmatched_gpu_ids"], nlohmann::json::array({2}));
}

TEST(DcgmVerdict, DcgmWordsAreMadeSafeForATerminal) {
  const auto o = judge(
      r2(), "dcgmi", exited(205, doc_with(1, 0, "Fail", {test::dcgm_warning("evil \x1b]0;title\x07 text\nmore", 52, 10, 2)})),
      node(1, false));
  const auto line = o.gpus[0].verdict.line();
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_NE(line.find("evil"), std::string::npos);
}

TEST(DcgmVerdict, EveryUnreadableOutcomeIsOneReason) {
  const auto gpus = node(2, false);
  ProgramRun not_started;
  not_started.why_not_started = "Permission denied";
  ProgramRun timed_out = exited(0, "");
  timed_out.exit_status.reset();
  timed_out.signal = 9;
  timed_out.timed_out = true;
  ProgramRun flood = exited(0, "");
  flood.exit_status.reset();
  flood.too_much_output = true;
  ProgramRun killed = exited(0, "");
  killed.exit_status.reset();
  killed.signal = 11;
  ProgramRun no_engine = exited(235, "Error: unable to establish a connection to the specified host: localhost\n");
  const std::string good = doc_with(2, -1, "Pass", {});
  const std::vector<std::pair<ProgramRun, std::string>> cases = {
      {not_started, "dcgmi diag -r 2 -j could not start: Permission denied"},
      {timed_out, "dcgmi diag -r 2 -j did not finish in 900 s: killed (--dcgm-timeout)"},
      {flood, "dcgmi diag -r 2 -j printed more than 64 MiB: killed"},
      {killed, "dcgmi diag -r 2 -j was ended by signal 11"},
      {no_engine, "dcgmi diag -r 2 -j exited 235: Error: unable to establish a connection to the specified host: localhost"},
      {exited(0, good.substr(0, good.size() / 2)), "dcgmi printed no JSON"},
      {exited(226, R"({"DCGM Diagnostic": {"version": "4.6.0", "runtime_error": "the level is not supported"}})"),
       "dcgmi diag -r 2 -j could not run the diagnostic: the level is not supported"},
      {exited(0, R"({"DCGM Diagnostic": {"test_categories": []}})"), "dcgmi diag -r 2 -j reported no result"},
  };
  for (const auto& [run, want] : cases) {
    const auto o = judge(r2(), "dcgmi", run, gpus);
    ASSERT_TRUE(o.problem) << want;
    EXPECT_EQ(o.problem->find(want), 0u) << *o.problem;
    EXPECT_EQ(o.problem->find('\n'), std::string::npos);
    EXPECT_TRUE(o.gpus.empty());
    EXPECT_EQ(o.summary["status"], "not read");
  }
  // Exit non-zero with every result passing: read, and a warning on the node.
  const auto o = judge(r2(), "dcgmi", exited(226, good), gpus);
  ASSERT_FALSE(o.problem);
  EXPECT_EQ(o.node.severity, Severity::warn);
  EXPECT_NE(o.node.line().find("exited 226 although no result failed"), std::string::npos);
}

TEST(DcgmVerdict, LevelsAndArguments) {
  for (int l = 1; l <= 4; ++l) {
    EXPECT_EQ(parse_dcgm_level("r" + std::to_string(l)), l);
    EXPECT_EQ(dcgm_diag_args(l), (std::vector<std::string>{"diag", "-r", std::to_string(l), "-j"}));
    EXPECT_GT(default_dcgm_timeout_s(l), l > 1 ? default_dcgm_timeout_s(l - 1) : 0);
  }
  for (const char* bad : {"", "r0", "r5", "2", "R2", "r2 ", "r12"}) {
    try {
      parse_dcgm_level(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), 5);
      EXPECT_NE(std::string(e.what()).find("expected r1, r2, r3 or r4"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace gpuscale::health
