// harness/guard/watchdog: the default budget, the progress rule (a point stalls when no rank completes a
// step for the budget), the stall report (who stalled, who waited, who did not answer) and the thread
// that looks each time an armed point's clock runs out.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <random>
#include <thread>

#include "harness/benchmarks/comm_timing.h"
#include "harness/guard/watchdog.h"
#include "harness/registry.h"

namespace gpuscale {
namespace {

using namespace std::chrono_literals;

TEST(WatchdogBudget, FloorMultipleAndOverride) {
  PointDemand small;
  small.bytes = 1e6;
  EXPECT_EQ(watchdog_budget(small, "cpu", std::nullopt), kWatchdogFloorSeconds);
  // 8.2e11 flops of a CPU GEMM at 5 GFLOP/s: 164 s expected, 1640 s allowed.
  PointDemand gemm;
  gemm.flops = 8.2e11;
  EXPECT_NEAR(watchdog_budget(gemm, "cpu", std::nullopt), 1640, 1e-6);
  EXPECT_EQ(watchdog_budget(gemm, "cuda", std::nullopt), kWatchdogFloorSeconds);  // 0.8 s on a slow GPU
  EXPECT_EQ(watchdog_budget(gemm, "cpu", 3.0), 3.0);
  EXPECT_EQ(watchdog_budget(gemm, "cpu", 0.0), 0.0);  // --watchdog 0: off
  // An NCCL point: its own -T timeout (300 s) acts first, with time for its hang report and abort.
  PointDemand nccl = small;
  nccl.transport_timeout_s = 300;
  EXPECT_EQ(watchdog_budget(nccl, "cuda", std::nullopt), 300 + kWatchdogTransportGrace);
  nccl.transport_timeout_s = 0;  // -T 0: NCCL waits forever, the watchdog does not
  EXPECT_EQ(watchdog_budget(nccl, "cuda", std::nullopt), kWatchdogFloorSeconds);
  nccl.transport_timeout_s = 300;
  EXPECT_EQ(watchdog_budget(nccl, "cuda", 30.0), 30.0);  // --watchdog wins
}

// The fleet benchmarks run a collective and make a communicator per round: at 512 nodes of 8 GPUs the
// node-pair tournament's 4095 rounds (at most one per rank) must fit the budget, --pairs-rounds shrinks it.
TEST(WatchdogBudget, FleetPointsGrowWithTheirRounds) {
  RunOptions o;
  const nlohmann::json p = {{"collective", "sendrecv"}, {"dtype", "fp32"}, {"size_bytes", 256 << 20}, {"placement", "out-of-place"}};
  const Benchmark* pairs = registry().find("pairs");
  ASSERT_NE(pairs, nullptr);
  const auto one = registry().find("sendrecv")->demand(p, DemandContext{o, "cuda", 4096});
  const auto all = pairs->demand(p, DemandContext{o, "cuda", 4096});
  // Four passes' worth of 4095 rounds: a suspect is confirmed by a second pass, and the pairs still
  // suspect by a pass of their own of at most twice the rounds (harness/benchmarks/fleet/pair_confirm.h).
  const double passes = 4;
  EXPECT_DOUBLE_EQ(all.bytes, one.bytes * 4095 * passes);
  EXPECT_GE(watchdog_budget(all, "cuda", std::nullopt), 2 * 4095 * passes);  // at least the communicators' setup
  o.pairs_rounds = 8;
  const auto some = pairs->demand(p, DemandContext{o, "cuda", 4096});
  EXPECT_DOUBLE_EQ(some.bytes, one.bytes * 8 * passes);
  EXPECT_LT(watchdog_budget(some, "cuda", std::nullopt), watchdog_budget(all, "cuda", std::nullopt));
  EXPECT_GE(registry().find("gpu_pairs")->demand(p, DemandContext{o, "cuda", 8}).setup_s, 28 * 2.0);  // 8 GPUs: 28 pairs
  // The sendrecv rail by rail: each rank is in one two-rank group a round, of the same message: the
  // round's work per rank is still one sendrecv's (the all_reduce over the pair is budgeted alike).
  const auto rails = pairs->demand(p, DemandContext{o, "cuda", 4096});
  EXPECT_DOUBLE_EQ(rails.bytes, registry().find("sendrecv")->demand(p, DemandContext{o, "cuda", 2}).bytes * 8 * passes);
  // --tiling sequential: a round's pairs take turns (at most ranks / 2 of them), each its own setup.
  o.tiling = TilingMode::sequential;
  const auto turns = pairs->demand(p, DemandContext{o, "cuda", 16});
  EXPECT_DOUBLE_EQ(turns.bytes, one.bytes * 8 * 8 * passes);
  EXPECT_DOUBLE_EQ(turns.setup_s, 2.0 * 8 * 8 * passes);
  // Where the run knows its nodes (16 ranks on 8 nodes): 7 rounds (8 with --pairs-rounds 8 capped), 4
  // pairs each, and the sendrecv's 2 rails of a pair in turns too; the all_reduce's pairs without rails.
  EXPECT_DOUBLE_EQ(pairs->demand(p, DemandContext{o, "cuda", 16, 8}).setup_s, 2.0 * 7 * 4 * 2 * passes);
  auto ar = p;
  ar["collective"] = "all_reduce";
  ar["op"] = "sum";
  EXPECT_DOUBLE_EQ(pairs->demand(ar, DemandContext{o, "cuda", 16, 8}).setup_s, 2.0 * 7 * 4 * passes);
  // Once the run has timed a communicator's creation, a round's allowance is a multiple of the slowest
  // (kPairSetupMultiple), never below the floor: 3 s inits at scale get 12 s a round, 0.1 s ones 2 s.
  EXPECT_DOUBLE_EQ(pairs->demand(ar, DemandContext{o, "cuda", 16, 8, 3.0}).setup_s, 12.0 * 7 * 4 * passes);
  EXPECT_DOUBLE_EQ(pairs->demand(ar, DemandContext{o, "cuda", 16, 8, 0.1}).setup_s, 2.0 * 7 * 4 * passes);
  o.tiling = TilingMode::concurrent;
  o.pairs_rounds.reset();
  EXPECT_DOUBLE_EQ(pairs->demand(p, DemandContext{o, "cuda", 4096, 512}).bytes, one.bytes * 511 * passes);
}


TEST(WatchdogBudget, CommunicatorCreationIsTimedAndTheSlowestKept) {
  const double before = slowest_communicator_init_s();
  double s = -1;
  auto made = timed_communicator([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // a sleep lasts at least this long
    return std::unique_ptr<Communicator>();
  }, &s);
  EXPECT_EQ(made, nullptr);
  EXPECT_GE(s, 0.03);
  EXPECT_GE(slowest_communicator_init_s(), std::max(before, s));
  double quick = -1;
  timed_communicator([] { return std::unique_ptr<Communicator>(); }, &quick);
  EXPECT_GE(quick, 0.0);
  EXPECT_GE(slowest_communicator_init_s(), s) << "a faster creation does not lower the slowest";
  EXPECT_DOUBLE_EQ(pair_setup_allowance_s(0), kPairSetupFloorS);
  EXPECT_DOUBLE_EQ(pair_setup_allowance_s(10), 10 * kPairSetupMultiple);
}

TEST(WatchdogBudget, CollectivesAndDpStepNameTheirTransportTimeout) {
  RunOptions o;
  o.backend_options.timeout_s = 120;
  const Benchmark* ar = registry().find("all_reduce");
  ASSERT_NE(ar, nullptr);
  const nlohmann::json p = {{"dtype", "fp32"}, {"size_bytes", 1024}, {"placement", "out-of-place"}, {"op", "sum"}};
  EXPECT_EQ(ar->demand(p, {o, "cpu", 2}).transport_timeout_s, 0);  // MPI: no timeout of its own
  auto nccl = p;
  nccl["transport"] = "nccl";
  EXPECT_EQ(ar->demand(nccl, {o, "cuda", 2}).transport_timeout_s, 120);
  const Benchmark* dp = registry().find("dp-step");
  ASSERT_NE(dp, nullptr);
  const nlohmann::json q = {{"dtype", "fp32"}, {"width", 64}, {"depth", 2}, {"batch", 16}, {"bucket_bytes", 4096}};
  EXPECT_EQ(dp->demand(q, {o, "cuda", 2}).transport_timeout_s, 120);
  const auto cpu = dp->demand(q, {o, "cpu", 2});
  EXPECT_EQ(cpu.transport_timeout_s, 0);
  EXPECT_GT(cpu.memory_bytes, 2u * 2 * 64 * 64 * 4);  // weights and gradients at least
  EXPECT_GT(cpu.flops, 0);
}

RankState state(int rank, Phase phase, std::string doing, bool answered = true) {
  RankState s;
  s.rank = rank;
  s.host = rank < 2 ? "node-a" : "node-b";
  s.pid = 1000 + rank;
  s.answered = answered;
  s.phase = phase;
  s.doing = std::move(doing);
  s.progress = 10 + static_cast<std::uint64_t>(rank);
  s.idle_s = phase == Phase::computing ? 7 : 4;  // past point()'s budget of 3 s: a stall
  return s;
}

StalledPoint point() { return {"all_reduce", {{"dtype", "fp32"}}, 4, "all_reduce fp32 1M on 4 GPU(s)", 3}; }

TEST(WatchdogReport, NamesTheStalledRankAndTheWaiting) {
  const auto r = describe_stall(point(), {state(0, Phase::collective, "all_reduce"), state(1, Phase::collective, "all_reduce"),
                                          state(2, Phase::computing, "all_reduce (injected stall)"),
                                          state(3, Phase::collective, "all_reduce")});
  EXPECT_EQ(r.message,
            "watchdog: all_reduce fp32 1M on 4 GPU(s) made no progress for 3 s (no rank completed a step); rank 2 "
            "(node-b, pid 1002) stalled in its own work (computing: all_reduce (injected stall); its last step 7 s "
            "ago); ranks 0, 1, 3 waited for it (in collective: all_reduce)");
  EXPECT_EQ(r.json["stalled_ranks"], nlohmann::json({2}));
  EXPECT_EQ(r.json["gpu_count"], 4);
  EXPECT_EQ(r.json["ranks"][2]["phase"], "computing");
  EXPECT_EQ(r.json["ranks"][0]["phase"], "in collective");
  EXPECT_EQ(r.json["ranks"][2]["progress"], 12);
  EXPECT_DOUBLE_EQ(r.json["ranks"][2]["idle_s"].get<double>(), 7);
  EXPECT_DOUBLE_EQ(r.json["ranks"][0]["idle_s"].get<double>(), 4);
}

TEST(WatchdogReport, TransportStallAndSilentRanks) {
  // Everyone inside the collective: nobody computes, the transport itself is stuck.
  auto r = describe_stall(point(), {state(0, Phase::collective, "all_reduce"), state(1, Phase::collective, "all_reduce")});
  EXPECT_NE(r.message.find("ranks 0, 1 waited (in collective: all_reduce); no rank was in its own work: the transport "
                           "itself stalled"),
            std::string::npos)
      << r.message;
  EXPECT_TRUE(r.json["stalled_ranks"].empty());
  // A rank that does not answer is the suspect.
  r = describe_stall(point(), {state(0, Phase::waiting, "gather to rank 0"), state(1, Phase::idle, "", false)});
  EXPECT_NE(r.message.find("rank 0 waited for it (waiting for peers: gather to rank 0); rank 1 did not answer"),
            std::string::npos)
      << r.message;
  EXPECT_EQ(r.json["stalled_ranks"], nlohmann::json({1}));
  EXPECT_TRUE(r.json["ranks"][1]["phase"].is_null());
  // Hostile host names and labels are printed safely.
  auto bad = state(0, Phase::computing, "x\x1b[31m");
  bad.host = "h\x07";
  auto p = point();
  p.label = "lab\x1b]0;el";
  r = describe_stall(p, {bad});
  EXPECT_EQ(r.message.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.message.find('\x07'), std::string::npos);
}

// The rule on seeded random jobs: a slow rank's recent step keeps the point alive, and only that.
TEST(WatchdogProgress, StalledExactlyWhenNoRankStepsWithinTheBudget) {
  std::mt19937 rng(20261207);
  std::uniform_real_distribution<double> idle(0, 600), budget(1, 400);
  std::bernoulli_distribution answers(0.8);
  for (int trial = 0; trial < 5000; ++trial) {
    const double b = budget(rng);
    std::vector<RankState> states;
    const int n = 1 + static_cast<int>(rng() % 16);
    double freshest = std::numeric_limits<double>::infinity();
    for (int r = 0; r < n; ++r) {
      auto s = state(r, static_cast<Phase>(rng() % 4), "x", answers(rng));
      s.idle_s = idle(rng);
      if (s.answered) freshest = std::min(freshest, s.idle_s);
      states.push_back(s);
    }
    const auto v = judge_progress(states, b);
    ASSERT_EQ(v.stalled, !(freshest < b)) << "trial " << trial << ": budget " << b << ", freshest step " << freshest;
    if (v.stalled) {
      EXPECT_EQ(v.look_again_s, 0);
      continue;
    }
    // Never a tight loop, never later than the budget, and at the next look with no new step, stalled.
    EXPECT_GE(v.look_again_s, kWatchdogMinLookSeconds);
    EXPECT_LE(v.look_again_s, std::max(b, kWatchdogMinLookSeconds) + 1e-3);
    auto later = states;
    for (auto& s : later) s.idle_s += v.look_again_s;
    EXPECT_TRUE(judge_progress(later, b).stalled) << "trial " << trial;
  }
}

TEST(WatchdogProgress, SlowButSteppingIsNotAStallAndSilenceIsNoProgress) {
  // 15 ranks wait for a slow host's rank, which completed a step 30 s ago: not stalled, and look when
  // that step turns 120 s old. The waiting ranks' own last steps (500 s ago) do not matter.
  std::vector<RankState> job;
  for (int r = 0; r < 16; ++r) {
    auto s = state(r, Phase::collective, "all_reduce");
    s.idle_s = r == 11 ? 30 : 500;
    job.push_back(s);
  }
  auto v = judge_progress(job, 120);
  EXPECT_FALSE(v.stalled);
  EXPECT_NEAR(v.look_again_s, 90, 1e-2);
  job[11].idle_s = 121;  // it stopped too: hung
  EXPECT_TRUE(judge_progress(job, 120).stalled);
  job[11].idle_s = 119.9995;  // just short of the budget: look again, but not at once
  EXPECT_DOUBLE_EQ(judge_progress(job, 120).look_again_s, kWatchdogMinLookSeconds);
  // A rank that did not answer (its process or node may be hung) keeps nothing alive, whatever it
  // last said; nor does a garbled answer (its idle read as infinite, harness/guard/sentinel_hub.cpp).
  job[11].idle_s = 0;
  job[11].answered = false;
  EXPECT_TRUE(judge_progress(job, 120).stalled);
  job[11].answered = true;
  job[11].idle_s = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(judge_progress(job, 120).stalled);
  EXPECT_TRUE(judge_progress({}, 120).stalled);  // nobody answered at all
}

TEST(WatchdogThread, LooksAgainWhileProgressingThenFiresOnce) {
  std::atomic<int> looks{0};
  Watchdog w([&](const StalledPoint&) { return ++looks < 3 ? 0.02 : 0.0; });  // progressing twice, then stalled
  auto p = point();
  p.budget_s = 0.02;
  w.arm(p);
  for (const auto give_up = std::chrono::steady_clock::now() + 30s; looks < 3 && std::chrono::steady_clock::now() < give_up;)
    std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(looks, 3);  // no look after the one that found it stalled (until armed again)
}

TEST(WatchdogThread, FiresOnceWhenArmedAndNotWhenDisarmed) {
  std::atomic<int> fired{0};
  std::string label;
  Watchdog w([&](const StalledPoint& p) {
    label = p.label;
    ++fired;
    return 0.0;
  });
  auto p = point();
  p.budget_s = 0.05;
  w.arm(p);
  // Generous deadlines and budgets: a loaded machine may delay any thread by a good fraction of a second.
  for (const auto give_up = std::chrono::steady_clock::now() + 30s; fired == 0 && std::chrono::steady_clock::now() < give_up;)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(label, p.label);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(fired, 1);  // once per arm
  // The checks that it does not fire need this thread to re-arm or disarm within a budget. A loaded
  // machine may stall it past the budget, and then firing is right: such a try is measured and repeated
  // (a watchdog that fires when it should not fails every try).
  using Clock = std::chrono::steady_clock;
  const auto quiet_try = [&](auto&& body) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      const int before = fired;
      if (body()) return fired == before;
    }
    ADD_FAILURE() << "5 tries, each stalled past its budget: the machine is too loaded to check";
    return true;
  };
  EXPECT_TRUE(quiet_try([&] {  // disarmed in time: never fires
    p.budget_s = 0.5;
    const auto t0 = Clock::now();
    w.arm(p);
    w.disarm();
    const bool in_time = Clock::now() - t0 < 400ms;
    std::this_thread::sleep_for(1s);
    return in_time;
  })) << "fired after disarm";
  p.budget_s = 0;  // no budget: never fires
  const int before = fired;
  w.arm(p);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(fired, before);
  w.disarm();
  EXPECT_TRUE(quiet_try([&] {  // re-arming pushes the deadline out: 4 x 0.4 s of re-arms outlast a budget of 1 s
    p.budget_s = 1;
    bool in_time = true;
    auto last = Clock::now();
    w.arm(p);
    for (int i = 0; i < 4; ++i) {
      std::this_thread::sleep_for(400ms);
      w.arm(p);
      in_time = in_time && Clock::now() - last < 900ms;
      last = Clock::now();
    }
    w.disarm();
    in_time = in_time && Clock::now() - last < 900ms;
    return in_time;
  })) << "fired although re-armed within its budget";
}

}  // namespace
}  // namespace gpuscale
