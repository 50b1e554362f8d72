// nccl-tests users' reflexes on `gpuscale run` (docs/usage.md "Coming from nccl-tests"): -d takes
// nccl-tests' type names, -c 0/1 is accepted (gpuscale always checks), -o refuses a reduction op, -o -
// means stdout, the default step factor is 2 and the sweep ends as nccl-tests' does; and the ETA is
// weighed by the plan's demand, not by the count of rows done.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/error.h"
#include "harness/benchmarks/collective_plan.h"
#include "harness/options/run_option_table.h"
#include "harness/run/progress.h"
#include "test_seed.h"
#include "usage_error.h"

namespace gpuscale {
namespace {

const RunOption& option(std::string_view key) {
  for (const auto& e : run_option_table())
    if (e.key == key) return e;
  throw std::runtime_error("no option " + std::string(key));
}

RunOptions parsed(std::string_view key, const std::string& text) {
  RunOptions o;
  option(key).parse(o, text, option(key).what());
  return o;
}

std::string refusal(std::string_view key, const std::string& text) {
  const auto e = test::usage_error([&] { (void)parsed(key, text); });
  return e.empty() ? "(accepted)" : e;
}

TEST(CliHabits, DtypesTakeNcclTestsNamesAndAll) {
  EXPECT_EQ(option("dtypes").names, "-d,--dtypes");
  EXPECT_EQ(parsed("dtypes", "float").dtypes, std::vector<DType>{DType::fp32});
  EXPECT_EQ(parsed("dtypes", "half,bfloat16,double,f8e4m3").dtypes,
            (std::vector<DType>{DType::fp16, DType::bf16, DType::fp64, DType::fp8_e4m3}));
  const auto all = parsed("dtypes", "all").dtypes;
  EXPECT_EQ(all.size(), 9u);
  for (DType t : {DType::fp64, DType::fp32, DType::bf16, DType::int8, DType::fp8_e5m2})
    EXPECT_NE(std::find(all.begin(), all.end(), t), all.end()) << dtype_name(t);
  EXPECT_NE(refusal("dtypes", "uint64").find("uint64"), std::string::npos);
}

TEST(CliHabits, CheckIsAcceptedAndZeroLeavesANote) {
  EXPECT_EQ(option("check").names, "-c,--check");
  EXPECT_TRUE(parsed("check", "1").notes.empty());
  const auto notes = parsed("check", "0").notes;
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("checks every measurement"), std::string::npos) << notes[0];
  EXPECT_NE(refusal("check", "2").find("use 1 or 0"), std::string::npos);
}

TEST(CliHabits, OutputRefusesAReductionOpAndTakesDash) {
  for (const std::string op : {"sum", "prod", "min", "max", "avg"}) {
    const auto why = refusal("output", op);
    EXPECT_NE(why.find("--ops " + op), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos);
  }
  EXPECT_EQ(parsed("output", "./sum").output, "./sum");
  EXPECT_FALSE(parsed("output", "r.json").result_to_stdout);
  EXPECT_TRUE(parsed("output", "-").result_to_stdout);
}

TEST(CliHabits, ResumeToStdoutIsRefused) {
  RunOptions o = parsed("output", "-");
  o.resume = "r.json";
  const OptionText none = [](std::string_view) -> const std::string& {
    static const std::string empty;
    return empty;
  };
  EXPECT_THROW(option("resume").check(o, none), Error);
  o.result_to_stdout = false;
  EXPECT_NO_THROW(option("resume").check(o, none));
}

TEST(CliHabits, QuietIsASwitch) {
  EXPECT_TRUE(option("quiet").is_switch);
  EXPECT_TRUE(parsed("quiet", "true").quiet);
  EXPECT_FALSE(parsed("quiet", "false").quiet);
}

TEST(CliHabits, DefaultStepFactorIsTwoAndTheSweepEndsAsNcclTests) {
  std::mt19937_64 rng(test_seed());
  for (const std::string backend : {"cpu", "cuda"}) {
    RunOptions o;
    const int lo = std::uniform_int_distribution<int>(0, 6)(rng), hi = std::uniform_int_distribution<int>(20, 27)(rng);
    o.min_bytes = 1ULL << lo;
    o.max_bytes = 1ULL << hi;
    const auto sizes = collective_sizes(o, backend);
    ASSERT_EQ(sizes.size(), static_cast<std::size_t>(hi - lo + 1)) << backend;
    EXPECT_EQ(sizes.back(), *o.max_bytes);  // -b 8 -e 64M reaches 64M
    // nccl-tests: the last size is the last step at or below -e.
    o.step_factor = 4;
    o.max_bytes = (1ULL << hi) + 1;
    EXPECT_LE(collective_sizes(o, backend).back(), *o.max_bytes);
    EXPECT_GT(collective_sizes(o, backend).back() * 4, *o.max_bytes);
  }
  RunOptions quick;
  quick.quick = true;
  EXPECT_EQ(collective_sizes(quick, "cpu").size(), 3u);  // --quick keeps its factor of 32: CI time
}

TEST(CliHabits, EtaIsWeighedByDemand) {
  std::mt19937_64 rng(test_seed());
  const double heavy = std::uniform_real_distribution<double>(1, 5)(rng);
  PointDemand stream;
  stream.bytes = heavy * 1e9;  // CPU watchdog rate: 1 GB/s
  PointDemand tiny;
  tiny.bytes = 1e3;
  const double ws = row_weight(stream, "cpu"), wt = row_weight(tiny, "cpu");
  EXPECT_NEAR(ws, heavy + kProgressRowSeconds, 1e-9);
  EXPECT_GT(ws / wt, 100);
  // One heavy row done in `elapsed` seconds, 40 tiny rows left: the ETA is a small part of it, not 40x.
  const double elapsed = std::uniform_real_distribution<double>(0.5, 3)(rng);
  const double eta = eta_seconds(elapsed, ws, 40 * wt);
  EXPECT_LT(eta, elapsed * 0.1);
  EXPECT_NEAR(eta, elapsed / ws * 40 * wt, 1e-12);
  // Heavy rows left after a tiny one: the ETA grows with them.
  EXPECT_GT(eta_seconds(elapsed, wt, 3 * ws), 100 * elapsed);
  EXPECT_EQ(eta_seconds(elapsed, 0, ws), 0);
  EXPECT_EQ(eta_seconds(elapsed, ws, 0), 0);
  // Flops and setup count as well.
  PointDemand gemm;
  gemm.flops = 5e9;
  gemm.setup_s = 2;
  EXPECT_NEAR(row_weight(gemm, "cpu"), 1 + 2 + kProgressRowSeconds, 1e-9);
}

TEST(CliHabits, SummaryStreamFollowsStdoutAndQuiet) {
  RunOptions o;
  EXPECT_EQ(summary_stream(o), stdout);
  o.result_to_stdout = true;
  EXPECT_EQ(summary_stream(o), stderr);
  o.quiet = true;
  EXPECT_NE(summary_stream(o), stdout);
  EXPECT_NE(summary_stream(o), stderr);
}

}  // namespace
}  // namespace gpuscale
