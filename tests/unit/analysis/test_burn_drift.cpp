// analysis/burn_drift: a burn-in's drift per rank and for the fleet, and the `sustained` outliers: a GPU
// that fell below its own start or below the fleet in its last windows, beyond its repetitions' noise.
// The rule's false- and true-positive rates are measured on seeded synthetic burn-ins (each window 20
// slices of noisy figures, as harness/benchmarks/burn/burn.cpp measures them), not asserted from one case.
#include <gtest/gtest.h>

#include <random>

#include "analysis/burn_drift.h"
#include "analysis/run_analysis.h"
#include "core/stats.h"

namespace gpuscale {
namespace {

using nlohmann::json;

struct BurnSpec {
  int ranks = 4;
  int windows = 12;
  std::string benchmark = "burn.mix";
  double slice_noise = 0.05;   // +- relative, each slice
  double window_noise = 0.03;  // +- relative, each rank's window level
  double fleet_swing = 0.0;    // +- relative, every rank of a window alike (the machine's load)
  double fleet_drift = 0.0;    // the whole fleet's figure falls linearly by this over the burn-in
  std::vector<int> throttled;  // these ranks slow down from window `throttle_from` ...
  int throttle_from = 3;
  double factor = 3;           // ... by this factor
  double offset = 1.0;         // rank `offset_rank`'s figures times this from the start
  int offset_rank = -1;
  int invalid_window = -1;     // this window's row failed its check
};

std::vector<ResultRow> burn_rows(const BurnSpec& s, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<ResultRow> rows;
  for (int w = 0; w < s.windows; ++w) {
    ResultRow row;
    row.benchmark = s.benchmark;
    row.scope = "collective";
    row.params = {{"kind", s.benchmark.substr(5)}, {"window", w}, {"window_s", 10}};
    row.gpu_count = s.ranks;
    row.unit = "TFLOP/s";
    row.status = w == s.invalid_window ? RowStatus::invalid : RowStatus::ok;
    const double fleet = (1 + s.fleet_swing * u(gen)) * (1 - s.fleet_drift * w / std::max(1, s.windows - 1));
    for (int r = 0; r < s.ranks; ++r) {
      double level = fleet * (1 + s.window_noise * u(gen));
      if (r == s.offset_rank) level *= s.offset;
      if (w >= s.throttle_from && std::find(s.throttled.begin(), s.throttled.end(), r) != s.throttled.end())
        level /= s.factor;
      std::vector<double> slices;
      for (int i = 0; i < 20; ++i) slices.push_back(level * (1 + s.slice_noise * u(gen)));
      RankValue v;
      v.rank = r;
      v.host = r < s.ranks / 2 ? "h0" : "h1";
      v.device_index = r % 2;
      v.stats = compute_stats(slices);
      v.value = v.stats.median;
      v.valid = w != s.invalid_window;
      row.ranks.push_back(v);
    }
    rows.push_back(std::move(row));
  }
  // Out of order on purpose: the analysis orders windows by params.window.
  std::shuffle(rows.begin(), rows.end(), gen);
  return rows;
}

std::vector<int> named_ranks(const json& drift) {
  std::vector<int> out;
  for (const auto& o : drift["sustained"]) out.push_back(o["ranks"][0].get<int>());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(BurnDrift, AThrottledHostIsTheOnlySustainedOutlier) {
  BurnSpec s;
  s.throttled = {2, 3};  // both ranks of h1, slowed 3x after the first quarter (throttle-after:h1:30:3)
  const auto drift = burn_drift(burn_rows(s, 1), json::array(), 0.10);
  EXPECT_EQ(named_ranks(drift), (std::vector<int>{2, 3}));
  for (const auto& o : drift["sustained"]) {
    EXPECT_EQ(o["kind"], "sustained");
    EXPECT_EQ(o["hosts"], json::array({"h1"}));
    EXPECT_EQ(o["benchmark"], "burn.mix");
    EXPECT_NEAR(o["deficit"].get<double>(), 2.0 / 3, 0.08);  // a third of its start
    EXPECT_NE(o["reason"].get<std::string>().find("below its first 3"), std::string::npos) << o["reason"];
    EXPECT_EQ(o["windows"], json::array({9, 11}));
  }
  ASSERT_EQ(drift["burn"].size(), 1u);
  const auto& b = drift["burn"][0];
  EXPECT_EQ(b["windows"], 12);
  ASSERT_EQ(b["ranks"].size(), 4u);
  EXPECT_NEAR(b["ranks"][2]["drift"].get<double>(), -2.0 / 3, 0.08);
  EXPECT_NEAR(b["ranks"][0]["drift"].get<double>(), 0, 0.08);
  EXPECT_GE(b["ranks"][2]["worst_window"].get<int>(), 3);
}

// Seeded trials: the rule's rates on this noise model (5% slices, 3% per rank and window, 10% for the
// whole machine per window). A 3x throttle of one host is named every time, and only it; clean burn-ins
// and one whose whole fleet drifts 30% name nothing (the fleet's drift is said, not pinned on a GPU).
TEST(BurnDrift, RatesOnSeededTrials) {
  int clean_named = 0, drift_named = 0, throttle_hits = 0, throttle_wrong = 0;
  constexpr int kTrials = 500;
  for (int t = 0; t < kTrials; ++t) {
    BurnSpec clean;
    clean.fleet_swing = 0.10;
    clean_named += !burn_drift(burn_rows(clean, 1000 + t), json::array(), 0.10)["sustained"].empty();
    BurnSpec drifting = clean;
    drifting.fleet_drift = 0.30;
    const auto d = burn_drift(burn_rows(drifting, 5000 + t), json::array(), 0.10);
    drift_named += !d["sustained"].empty();
    EXPECT_LT(d["burn"][0]["fleet"]["drift"].get<double>(), -0.05);  // said, though the machine swings 10%
    BurnSpec hot = clean;
    hot.throttled = {2, 3};
    const auto named = named_ranks(burn_drift(burn_rows(hot, 9000 + t), json::array(), 0.10));
    throttle_hits += named == std::vector<int>{2, 3};
    throttle_wrong += std::count_if(named.begin(), named.end(), [](int r) { return r < 2; });
  }
  EXPECT_EQ(clean_named, 0) << "of " << kTrials;
  EXPECT_EQ(drift_named, 0) << "of " << kTrials;
  EXPECT_EQ(throttle_hits, kTrials);
  EXPECT_EQ(throttle_wrong, 0);
}

// A 15% throttle is above the 10% threshold and beyond this noise: named in most trials, never a wrong rank.
TEST(BurnDrift, ASmallerThrottleIsNamedAboveTheThreshold) {
  int hits = 0, wrong = 0;
  for (int t = 0; t < 200; ++t) {
    BurnSpec s;
    s.throttled = {1};
    s.factor = 1 / 0.80;  // 20% slower
    const auto named = named_ranks(burn_drift(burn_rows(s, 300 + t), json::array(), 0.10));
    hits += std::find(named.begin(), named.end(), 1) != named.end();
    wrong += std::count_if(named.begin(), named.end(), [](int r) { return r != 1; });
  }
  EXPECT_GE(hits, 190);
  EXPECT_EQ(wrong, 0);
}

TEST(BurnDrift, BelowTheFleetFromTheStartIsNamedWithThreeOrMoreRanks) {
  BurnSpec s;
  s.offset_rank = 1;
  s.offset = 0.7;  // 30% below its peers all along: no fall from its own start
  auto drift = burn_drift(burn_rows(s, 7), json::array(), 0.10);
  EXPECT_EQ(named_ranks(drift), std::vector<int>{1});
  EXPECT_NE(drift["sustained"][0]["reason"].get<std::string>().find("below the fleet's median"), std::string::npos);
  s.ranks = 2;  // two ranks: which one is slow cannot be told
  EXPECT_TRUE(burn_drift(burn_rows(s, 7), json::array(), 0.10)["sustained"].empty());
}

TEST(BurnDrift, AllReduceNamesNoRankAndAFailedWindowHoldsNoFigure) {
  BurnSpec s;
  s.benchmark = "burn.all_reduce";
  s.throttled = {2, 3};
  auto drift = burn_drift(burn_rows(s, 3), json::array(), 0.10);
  EXPECT_TRUE(drift["sustained"].empty());
  EXPECT_LT(drift["burn"][0]["ranks"][2]["drift"].get<double>(), -0.5);  // its drift is still said
  BurnSpec bad;
  bad.invalid_window = 0;
  bad.windows = 4;
  drift = burn_drift(burn_rows(bad, 3), json::array(), 0.10);
  EXPECT_EQ(drift["burn"][0]["windows"], 4);
  EXPECT_NE(drift["burn"][0]["fleet"]["worst_window"], 0);  // window 0 has no figure, so it is not the worst
  EXPECT_TRUE(drift["burn"][0]["fleet"]["start"].is_null());  // q = 1: the start was window 0's
}

// The windows' SDC metrics become analysis.sdc: exactly the ranks that disagreed, with their place on
// their host, and their hosts join the suspects.
TEST(BurnDrift, ARankThatDisagreedIsNamedWithItsPlace) {
  BurnSpec s;
  s.benchmark = "burn.gemm";
  s.windows = 3;
  auto rows = burn_rows(s, 5);
  for (auto& row : rows)
    for (auto& rv : row.ranks) {
      rv.metrics["sdc"] = rv.rank == 3 && row.params["window"] != 1 ? "disagrees" : "agrees";
      if (rv.metrics["sdc"] == "disagrees") rv.metrics["sdc_block"] = 7;
    }
  const auto sdc = burn_corruption(rows, json::array());
  ASSERT_EQ(sdc.size(), 2u);
  for (const auto& e : sdc) {
    EXPECT_EQ(e["rank"], 3);
    EXPECT_EQ(e["host"], "h1");
    EXPECT_EQ(e["local_rank"], 1);  // h1's second rank
    EXPECT_EQ(e["first_block"], 7);
  }
  EXPECT_EQ(sdc[0]["window"], 0);
  EXPECT_EQ(sdc[1]["window"], 2);
  // The run's analysis object names the corrupting GPU's host a suspect (analysis/run_analysis.h).
  const json doc = {{"ranks", json::array()}};
  const json analysis = run_analysis(doc, rows, AnalysisRules{});
  EXPECT_EQ(analysis["outlier_hosts"], json::array({"h1"}));
  EXPECT_NE(format_burn_drift(analysis).find("silent data corruption: rank 3 (h1, device 1, local rank 1)"), std::string::npos)
      << format_burn_drift(analysis);
}

// The throttle reasons its GPU's telemetry reported in its last windows go with a sustained outlier;
// windows without telemetry say nothing of them.
TEST(BurnDrift, ASustainedOutlierCarriesTheThrottleReasonsOfItsLastWindows) {
  BurnSpec s;
  s.throttled = {2};
  auto rows = burn_rows(s, 21);
  for (auto& row : rows)
    for (auto& rv : row.ranks) {
      const bool hot = rv.rank == 2 && row.params["window"].get<int>() >= 10;
      rv.metrics["telemetry"] = {{"throttled", hot}};
      if (hot) rv.metrics["telemetry"]["throttle_reasons"] = row.params["window"] == 10 ? json{"HW_THERMAL"} : json{"SW_POWER_CAP"};
    }
  auto drift = burn_drift(rows, json::array(), 0.10);
  ASSERT_EQ(named_ranks(drift), std::vector<int>{2});
  EXPECT_EQ(drift["sustained"][0]["throttle_reasons"], json::array({"HW_THERMAL", "SW_POWER_CAP"}));  // windows 9-11
  EXPECT_NE(drift["sustained"][0]["reason"].get<std::string>().find("throttled: HW_THERMAL, SW_POWER_CAP"), std::string::npos);
  for (auto& row : rows)
    for (auto& rv : row.ranks) rv.metrics["telemetry"] = {{"throttled", false}};
  drift = burn_drift(rows, json::array(), 0.10);
  EXPECT_EQ(drift["sustained"][0]["throttle_reasons"], json::array());
  EXPECT_NE(drift["sustained"][0]["reason"].get<std::string>().find("no throttle reason reported"), std::string::npos);
  for (auto& row : rows)
    for (auto& rv : row.ranks) rv.metrics.erase("telemetry");
  EXPECT_FALSE(burn_drift(rows, json::array(), 0.10)["sustained"][0].contains("throttle_reasons"));
}

TEST(BurnDrift, NoBurnInNoSection) {
  ResultRow row;
  row.benchmark = "stream.triad";
  const auto drift = burn_drift({row}, json::array(), 0.10);
  EXPECT_TRUE(drift["burn"].empty());
  EXPECT_TRUE(drift["sustained"].empty());
  EXPECT_EQ(format_burn_drift(drift), "");
}

TEST(BurnDrift, TerminalText) {
  BurnSpec s;
  s.throttled = {3};
  const auto text = format_burn_drift(burn_drift(burn_rows(s, 11), json::array(), 0.10));
  EXPECT_NE(text.find("burn.mix"), std::string::npos) << text;
  EXPECT_NE(text.find("12 windows"), std::string::npos) << text;
  EXPECT_NE(text.find("fleet "), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace gpuscale
