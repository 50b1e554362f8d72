// Detection power (tools/detection_power/detection_power.h): a 50% fault of every kind it plants is always
// named by its identity on a small fleet, a clean one names nothing, the table counts what it should,
// and bad configurations are one line each. Seeded: the printed seed replays a failure.
#include "tools/detection_power/detection_power.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "test_seed.h"

namespace gpuscale::detection {
namespace {

PowerConfig small(std::uint64_t seed) {
  PowerConfig c;
  c.shape = {64, 8};
  c.seed = seed;
  c.trials = 20;
  // Small populations at the default noise leave no bar under half for some kinds (8 nodes' storage at
  // 5%; a node's 28 NVLink pairs at 4.5%): rates to measure (docs/measurements.md), not to assert.
  // These tests are about identities: here storage nodes and NVLink pairs spread as the GPUs do.
  c.noise.storage_spread = c.noise.gemm.spread;
  c.noise.nvlink = c.noise.gemm;
  return c;
}

bool named(const Judgement& j) { return std::find(j.named.begin(), j.named.end(), j.planted) != j.named.end(); }

// The rule names a clean fleet's thing in about 1% of runs (--false-alarm) and an 8-node population
// is weak: of 20 trials x 6 kinds, a half-speed fault is missed at most twice and something else named
// at most 3 times (a 1% rate gives 3 or more in 20 runs about once in 1,000).
TEST(DetectionPower, AHalfSpeedFaultIsNamedByItsIdentityAndRarelyAnythingElse) {
  auto c = small(test_seed());
  c.noise.flaky_p = 1;  // every repetition slow: flaky is then a slow GPU (P 0.3 is measured, not asserted)
  int missed = 0, extra = 0;
  std::string misses;
  for (int i = 0; i < c.trials; ++i) {
    Trial t(c, trial_seed(c.seed, static_cast<std::uint64_t>(i)));
    for (auto kind : judged_kinds()) {
      // 8 nodes' storage (3 writes of 5% noise each) leaves no bar under half at any useful rate: the
      // table measures it (docs/measurements.md); the 512-GPU fleets name it.
      if (kind == FaultKind::slow_storage) continue;
      const auto judge = judges_of(kind).back();  // a history kind under --since at its step
      const auto j = t.planted({kind, 0.5}, judge);
      if (!named(j)) {
        ++missed;
        misses += fmt::format(" trial {}: {} at {};", i, fault_kind_name(kind), j.planted);
      }
      extra += static_cast<int>(j.named.size()) - (named(j) ? 1 : 0) > 0;
      if (judge != Judge::fleet && named(j)) {
        EXPECT_EQ(j.changed_run, c.noise.step_run);
      }
    }
  }
  EXPECT_LE(missed, 2) << misses;
  EXPECT_LE(extra, 3);
}

TEST(DetectionPower, ACleanSmallFleetNamesSomethingAtMostAtTheFalseAlarmRate) {
  const auto c = small(test_seed());
  int naming = 0;
  for (int i = 0; i < c.trials; ++i) {
    Trial t(c, trial_seed(c.seed, static_cast<std::uint64_t>(i)));
    ASSERT_EQ(t.clean().size(), 7u);
    bool any = false;
    for (const auto& m : t.clean()) any |= !m.named.empty();
    naming += any;
  }
  EXPECT_LE(naming, 3) << "of " << c.trials << " clean runs";
}

TEST(DetectionPower, PlantingLeavesTheTrialsFleetAsItWas) {
  const auto c = small(test_seed());
  Trial t(c, trial_seed(c.seed, 3));
  const auto before = t.planted({FaultKind::slow_gpu, 0.5}, Judge::fleet);
  t.planted({FaultKind::throttle_after, 0.5}, Judge::history);
  t.planted({FaultKind::slow_mem, 0.5}, Judge::fleet);
  EXPECT_EQ(t.planted({FaultKind::slow_gpu, 0.5}, Judge::fleet).named, before.named);
  Trial again(c, trial_seed(c.seed, 3));
  EXPECT_EQ(again.places().gemm_gpu, t.places().gemm_gpu);
  EXPECT_NE(trial_seed(c.seed, 3), trial_seed(c.seed, 4));
}

TEST(DetectionPower, TheTableCountsNamedWrongAndCleanRuns) {
  PowerRow row;
  tally(row, {"a", {"b", "a", "c"}, std::nullopt}, 6);
  tally(row, {"a", {"b"}, std::nullopt}, 6);
  tally(row, {"a", {}, std::nullopt}, 6);
  tally(row, {"a", {"a"}, 6}, 6);
  tally(row, {"a", {"a"}, 7}, 6);
  EXPECT_EQ(row.trials, 5);
  EXPECT_EQ(row.named, 3);
  EXPECT_EQ(row.wrong, 3);
  EXPECT_EQ(row.step_right, 1);
  CleanRow clean;
  tally(clean, {});
  tally(clean, {"x", "y"});
  tally(clean, {"z"});
  EXPECT_EQ(clean.runs, 3);
  EXPECT_EQ(clean.named, 3);
  EXPECT_EQ(clean.runs_with_any, 2);
}

TEST(DetectionPower, TheTableHasARowPerFaultSizeAndRuleAndACleanRowPerMeasurement) {
  auto c = small(test_seed());
  c.trials = 3;
  const auto t = measure_power(c);
  std::size_t rows = 0, claims = 0;
  for (auto kind : judged_kinds()) {
    rows += judges_of(kind).size() * c.sizes.size();
    claims += kind != FaultKind::flaky && judges_of(kind) == std::vector{Judge::fleet};  // a claim row each
  }
  ASSERT_EQ(t.rows.size(), rows + claims);
  for (const auto& r : t.rows) {
    if (r.claim) EXPECT_EQ(r.trials + r.no_bar, 3);  // planted at the claim, or no useful bar to plant
    else EXPECT_EQ(r.trials, 3);
  }
  EXPECT_EQ(static_cast<std::size_t>(std::count_if(t.rows.begin(), t.rows.end(), [](const auto& r) { return r.claim; })),
            claims);
  EXPECT_EQ(t.rows.front().fault, judged_kinds().front());
  EXPECT_EQ(t.rows.back().fault, judged_kinds().back());
  const auto throttled = std::find_if(t.rows.rbegin(), t.rows.rend(), [](const auto& r) { return r.fault == FaultKind::throttle_after; });
  ASSERT_NE(throttled, t.rows.rend());
  EXPECT_EQ(throttled->judge, Judge::history_since);  // throttle-after under both windows of the history rule
  ASSERT_EQ(t.clean.size(), 8u);
  EXPECT_EQ(t.clean.back().measurement, "fleet (all)");
  for (const auto& r : t.clean) EXPECT_EQ(r.runs, 3);
}

// The kinds it plants are the table's (core/fault_kind_table.def, judged_by), by their names.
TEST(DetectionPower, TheKindsItPlantsAreTheTablesJudgedKinds) {
  const auto kinds = judged_kinds();
  for (const auto& k : fault_kinds()) {
    const bool judged = std::find(kinds.begin(), kinds.end(), k.kind) != kinds.end();
    EXPECT_EQ(judged, k.judged_by != DetectionRule::none) << k.name;
    EXPECT_EQ(judges_of(k.kind).size(), k.judged_by == DetectionRule::history ? 2u : judged ? 1u : 0u) << k.name;
  }
  EXPECT_EQ(judged_kinds_named({"throttle-after", "slow-storage"}),
            (std::vector<FaultKind>{FaultKind::throttle_after, FaultKind::slow_storage}));
  const PowerConfig defaults;
  EXPECT_EQ(defaults.faults, judged_kinds());
  EXPECT_NE(judged_kind_names(",").find("slow-gpu,slow-mem"), std::string::npos);
  for (const std::string bad : {"slow-host", "slow-disk"}) {  // a run's kind it does not plant; no kind at all
    try {
      judged_kinds_named({bad});
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), 2);
      EXPECT_EQ(std::string(e.what()), "--faults: '" + bad + "' is not a fault kind detection power plants (" + judged_kind_names() + ")");
    }
  }
}

TEST(DetectionPower, BadConfigurationsAreOneLineEach) {
  auto refused = [](PowerConfig c, const std::string& part) {
    try {
      check_config(c);
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), 2);
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      return;
    }
    ADD_FAILURE() << "not refused: " << part;
  };
  PowerConfig c;
  check_config(c);
  auto bad = c;
  bad.shape.gpus = 100;
  refused(bad, "not a positive multiple of --gpus-per-node 8");
  bad = c;
  bad.shape = {16, 8};
  refused(bad, "at least 3 nodes");
  bad = c;
  bad.shape = {64, 2};
  refused(bad, "at least 3 GPUs");
  bad = c;
  bad.shape = {8 * 8192, 8};
  refused(bad, "beyond the limit of 1.00 GiB (at most 4729 nodes)");
  bad = c;
  bad.trials = kMaxTrials + 1;
  refused(bad, "--trials");
  bad = c;
  bad.outlier.fraction = 1;
  refused(bad, "--outlier");
  bad = c;
  bad.outlier.false_alarm = 0;
  refused(bad, "--false-alarm");
  bad = c;
  bad.sizes = {0.1, 1.5};
  refused(bad, "1.5 is not a slowdown");
  bad = c;
  bad.noise.step_run = 11;
  refused(bad, "--step-run");
  bad = c;
  bad.noise.nvlink.spread = -0.1;
  refused(bad, "--nvlink-noise");
  bad = c;
  bad.noise.storage_rep_noise = 0.7;
  refused(bad, "--storage-noise");
  bad = c;
  bad.faults = {FaultKind::slow_gpu, FaultKind::slow_host};
  refused(bad, "'slow-host' is not a fault kind detection power plants");
  EXPECT_LE(largest_matrix_bytes({4729 * 8, 8}), kMemoryLimit);
  EXPECT_GT(largest_matrix_bytes({4730 * 8, 8}), kMemoryLimit);
}

}  // namespace
}  // namespace gpuscale::detection
