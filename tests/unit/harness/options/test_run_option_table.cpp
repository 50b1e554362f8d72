// harness/run_option_table: every option of `gpuscale run` parses from its text; every recorded one
// records and re-applies (resume) to the same value; the value lists are the ones the parser and the
// recorder both accept; and plan.options keeps the keys that files written before the table hold.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "core/error.h"
#include "harness/options/run_option_table.h"
#include "harness/options/run_option_values.h"
#include "harness/run/resume.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

using nlohmann::json;

const RunOption& option(std::string_view key) {
  for (const auto& e : run_option_table())
    if (e.key == key) return e;
  throw std::runtime_error("no option " + std::string(key));
}

RunOptions parsed(const RunOption& e, const std::string& text) {
  RunOptions o;
  e.parse(o, text, e.what());
  return o;
}

std::string parse_error(const RunOption& e, const std::string& text) {
  try {
    (void)parsed(e, text);
  } catch (const Error& err) {
    return err.what();
  }
  return "(accepted)";
}

// A random text each recorded option accepts, unlike its default.
std::string sample_text(const RunOption& e, std::mt19937_64& rng) {
  auto n = [&](int lo, int hi) { return std::to_string(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  const std::map<std::string, std::function<std::string()>> samples = {
      {"quick", [] { return "true"; }},
      {"benchmarks", [] { return "stream,all_reduce"; }},
      {"dtypes", [] { return "fp32,bf16"; }},
      {"min_bytes", [&] { return n(1, 64) + "K"; }},
      {"max_bytes", [&] { return n(1, 64) + "M"; }},
      {"step_factor", [&] { return n(2, 9); }},
      {"step_bytes", [&] { return n(1, 4096); }},
      {"iters", [&] { return n(1, 100); }},
      {"warmup", [&] { return n(1, 100); }},
      {"reps", [&] { return n(1, 100); }},
      {"iter_timing", [] { return "0"; }},
      {"skip_iters", [&] { return n(1, 10); }},
      {"ops", [] { return "max,sum"; }},
      {"placements", [&] { return n(0, 1) == "0" ? "in" : "in-place,out-of-place"; }},
      {"skews", [&] { return "uniform,zipf:" + n(1, 9) + ".25"; }},
      {"array_bytes", [&] { return n(1, 512) + "M"; }},
      {"gemm_shapes", [&] { return n(1, 999) + ",64x32x" + n(1, 99) + ":TN"; }},
      {"copy_bytes", [&] { return n(1, 512) + "K"; }},
      {"threads", [&] { return n(1, visible_cores()); }},
      {"time_reduce", [&] { return std::string(time_reduce_values()[std::stoul(n(1, 3))].name); }},
      {"transports", [] { return "mpi,nccl"; }},
      {"dp_width", [&] { return n(1, 9999); }},
      {"dp_depth", [&] { return n(1, 16); }},
      {"dp_batch", [&] { return n(1, 9999); }},
      {"dp_bucket", [&] { return n(1, 64) + "M"; }},
      {"models", [] { return "llama3-70b,m.json"; }},
      {"layouts", [&] { return "tp=" + n(1, 8) + ",pp=2;fsdp"; }},
      {"layers", [&] { return n(1, 99); }},
      {"scalings", [&] { return n(0, 1) == "0" ? "strong" : "weak,strong"; }},
      {"burn_kinds", [&] { return n(0, 1) == "0" ? "gemm,mix" : "all_reduce"; }},
      {"burn_window_s", [&] { return n(1, 60) + "s"; }},
      {"burn_duration_s", [&] { return n(2, 60) + "m"; }},
      {"ckpt_dir", [&] { return "/scratch/ckpt" + n(1, 9); }},
      {"ckpt_bytes", [&] { return n(1, 64) + "G"; }},
      {"ckpt_rank_bytes", [&] { return n(1, 64) + "M"; }},
      {"link_peak", [&] { return n(1, 900) + ".5"; }},
      {"net_peak", [&] { return n(1, 400); }},
      {"watchdog_s", [&] { return n(1, 600); }},
      {"timeout_s", [&] { return n(1, 299); }},
      {"tiling", [&] { return n(0, 1) == "0" ? "sequential" : "first"; }},
      {"rep_order", [] { return "blocked"; }},
      {"outlier", [&] { return "0." + n(11, 99); }},
      {"min_effect", [&] { return "0." + n(11, 99); }},
      {"false_alarm", [&] { return "0." + n(11, 99); }},
      {"pairs_rounds", [&] { return n(1, 4096); }},
      {"fail_on_outliers", [] { return "true"; }},
      {"rank_stats", [] { return "true"; }},
  };
  auto it = samples.find(e.key);
  return it == samples.end() ? std::string() : it->second();
}

TEST(RunOptionTable, NamesAndKeysAreUnique) {
  std::set<std::string> keys, flags;
  for (const auto& e : run_option_table()) {
    EXPECT_TRUE(keys.insert(e.key).second) << e.key;
    EXPECT_TRUE(flags.insert(e.flag()).second) << e.flag();
    EXPECT_EQ(e.flag().rfind("--", 0), 0u) << e.names;
    EXPECT_FALSE(e.help.empty()) << e.names;
    EXPECT_EQ(e.parse == nullptr, e.shared) << e.names;
    EXPECT_EQ(e.record != nullptr, e.recorded == Recorded::shapes || e.recorded == Recorded::label) << e.names;
    EXPECT_EQ(e.adopt != nullptr, e.recorded == Recorded::shapes) << e.names;
  }
  EXPECT_EQ(option("min_bytes").what(), "-b/--minbytes");
  EXPECT_EQ(option("min_bytes").flag(), "--minbytes");
}

// The keys of plan.options in every result file written so far: --resume reads them.
TEST(RunOptionTable, PlanOptionKeysAreTheRecordedOnes) {
  const std::set<std::string> expected = {
      "quick", "benchmarks", "dtypes", "min_bytes", "max_bytes", "step_factor", "step_bytes", "iters", "warmup",
      "reps", "iter_timing", "skip_iters", "ops", "placements", "skews", "array_bytes", "gemm_shapes", "copy_bytes", "threads", "time_reduce",
      "transports", "dp_width", "dp_depth", "dp_batch", "dp_bucket", "models", "layouts", "layers", "scalings", "burn_kinds",
      "burn_window_s", "burn_duration_s", "ckpt_dir", "ckpt_bytes", "ckpt_rank_bytes", "peaks_file", "link_peak", "net_peak", "watchdog_s",
      "timeout_s", "telemetry", "tiling", "rep_order", "outlier", "min_effect", "false_alarm", "pairs_rounds", "fail_on_outliers",
      "rank_stats"};
  std::set<std::string> got;
  const json recorded = plan_options_json(RunOptions{});  // named: items() of a temporary would dangle
  for (const auto& [key, value] : recorded.items()) got.insert(key);
  EXPECT_EQ(got, expected);
  std::set<std::string> given;  // what --resume compares: plan.options plus backend and seed
  for (const auto& [key, flag] : recorded_option_flags()) given.insert(key);
  auto with_top = expected;
  with_top.insert({"backend", "seed"});
  EXPECT_EQ(given, with_top);
}

TEST(RunOptionTable, EveryRecordedOptionRoundTrips) {
  std::mt19937_64 rng(test_seed());
  const json defaults = plan_options_json(RunOptions{});
  for (int round = 0; round < 20; ++round)
    for (const auto& e : run_option_table()) {
      if (!e.record || e.shared) continue;
      if (e.key == "peaks_file") continue;  // the command loads the file (cli/cmd_run.cpp): the e2e peaks tests cover it
      const std::string text = sample_text(e, rng);
      ASSERT_FALSE(text.empty()) << "no sample text for " << e.key << ": add one to this test";
      const RunOptions o = parsed(e, text);
      const json recorded = e.record(o);
      EXPECT_NE(recorded, defaults.at(e.key)) << e.key << " " << text;  // the text changed the option
      EXPECT_EQ(plan_options_json(o).at(e.key), recorded) << e.key;
      if (!e.adopt) continue;  // a label: not taken back
      RunOptions back;
      e.adopt(back, recorded);
      EXPECT_EQ(e.record(back), recorded) << e.key << " " << text;
    }
}

// The one rule the command binds to every value option: an empty value is refused, any other text is
// left to the option's own parser.
TEST(RunOptionTable, AnEmptyValueIsRefused) {
  EXPECT_NE(empty_value_problem(""), "");
  for (const char* text : {"x", " ", "0", "-", ","}) EXPECT_EQ(empty_value_problem(text), "") << text;
}

TEST(RunOptionTable, ValueListsServeParserAndRecorder) {
  for (const auto& v : time_reduce_values()) {
    EXPECT_EQ(parsed(option("time_reduce"), std::string(v.name)).time_reduce, v.name);
    EXPECT_EQ(parsed(option("time_reduce"), std::string(1, v.nccl_tests)).time_reduce, v.name);  // nccl-tests -a
    RunOptions back;
    option("time_reduce").adopt(back, json(v.name));
    EXPECT_EQ(back.time_reduce, v.name);
    EXPECT_NE(option("time_reduce").help.find(v.name), std::string::npos);
  }
  EXPECT_EQ(parse_error(option("time_reduce"), "median"),
            "invalid -a/--time-reduce 'median': use avg, min, max, rank0 (or 0-3 as nccl-tests)");
  for (const auto t : transport_values()) {
    EXPECT_EQ(parsed(option("transports"), std::string(t)).transports, std::vector<std::string>{std::string(t)});
    EXPECT_NE(option("transports").help.find(t), std::string::npos);
  }
  EXPECT_EQ(parse_error(option("transports"), "shm"), "invalid --transports 'shm': use nccl and/or mpi");
  for (const auto& p : placement_values()) {
    EXPECT_EQ(parsed(option("placements"), std::string(p.alias)).in_place, std::vector<bool>{p.in_place});
    EXPECT_EQ(option("placements").record(parsed(option("placements"), std::string(p.name))), json::array({p.name}));
    EXPECT_EQ(placement_name(p.in_place), p.name);
  }
  EXPECT_EQ(parse_error(option("placements"), "in,sideways"),
            "invalid --placement 'sideways': use out-of-place and/or in-place");
  RunOptions o;
  EXPECT_THROW(option("placements").adopt(o, json::array({"in"})), BadRecordedValue);  // the file holds names only
  EXPECT_THROW(option("transports").adopt(o, json::array({"shm"})), BadRecordedValue);
  EXPECT_THROW(option("time_reduce").adopt(o, json("0")), BadRecordedValue);
}

TEST(RunOptionTable, ApplyParsesGivenAndInitialTextsAndChecksRanges) {
  std::map<std::string, std::string> given = {{"min_bytes", "10M"}, {"max_bytes", "1M"}, {"iters", "0"}};
  const OptionText text = [&](std::string_view key) -> const std::string& {
    static const std::string none;
    auto it = given.find(std::string(key));
    if (it != given.end()) return it->second;
    const auto& e = option(key);
    static std::map<std::string, std::string> initial;
    return e.initial[0] ? initial.emplace(e.key, e.initial).first->second : none;
  };
  RunOptions o;
  try {
    apply_run_options(Section::measure, o, text);
    FAIL() << "accepted -b 10M -e 1M";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "invalid sizes: -b 10M is larger than -e 1M");  // before -n: the order of resolve
  }
  given = {{"reps", "7"}, {"seed", "42"}};
  o = RunOptions{};
  apply_run_options(Section::measure, o, text);
  EXPECT_EQ(o.reps, 7);
  EXPECT_EQ(o.seed, 42u);
  EXPECT_EQ(o.backend, "auto");
  EXPECT_EQ(o.time_reduce, "avg");
  EXPECT_FALSE(o.watchdog_s);  // a reliability option: not in this section
  given = {{"watchdog_s", "0"}};
  apply_run_options(Section::reliability, o, text);
  EXPECT_EQ(o.watchdog_s, 0.0);
}

// --threads above the logical CPUs this process may run on: one line naming the flag, the value and the
// limit (100000 used to start that many threads and crash; 2^31-1 ran libgomp out of memory).
TEST(RunOptionTable, ThreadsAtMostTheVisibleCores) {
  const auto& e = option("threads");
  const int cores = visible_cores();
  ASSERT_GE(cores, 1);
  EXPECT_EQ(parsed(e, std::to_string(cores)).backend_options.threads, cores);
  std::mt19937_64 rng(test_seed());
  const int over = cores + 1 + static_cast<int>(rng() % 100000);
  for (const std::string& text : {std::to_string(over), std::string("100000"), std::string("2147483647")}) {
    if (std::stoll(text) <= cores) continue;
    EXPECT_EQ(parse_error(e, text), "invalid --threads '" + text + "': must be at most " + std::to_string(cores) +
                                        ", the logical CPUs this process may run on");
  }
  EXPECT_EQ(parse_thread_count("5", "--threads", 5), 5);
  EXPECT_THROW(parse_thread_count("6", "--threads", 5), Error);
  EXPECT_THROW(parse_thread_count("0", "--threads", 5), Error);
  // A resumed file's recorded count is held to the same limit.
  RunOptions o;
  EXPECT_THROW(e.adopt(o, json(over)), BadRecordedValue);
  EXPECT_THROW(e.adopt(o, json(-1)), BadRecordedValue);
  e.adopt(o, json(cores));
  EXPECT_EQ(o.backend_options.threads, cores);
  e.adopt(o, json(nullptr));
  EXPECT_EQ(o.backend_options.threads, 0);
}

}  // namespace
}  // namespace gpuscale
