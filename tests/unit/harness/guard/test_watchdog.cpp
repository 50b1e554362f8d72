// harness/guard/watchdog: the default budget, the stall report (who stalled, who waited, who did not answer)
// and the thread that fires when an armed point outlives its budget.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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
  return s;
}

StalledPoint point() { return {"all_reduce", {{"dtype", "fp32"}}, 4, "all_reduce fp32 1M on 4 GPU(s)", 3}; }

TEST(WatchdogReport, NamesTheStalledRankAndTheWaiting) {
  const auto r = describe_stall(point(), {state(0, Phase::collective, "all_reduce"), state(1, Phase::collective, "all_reduce"),
                                          state(2, Phase::computing, "all_reduce (injected stall)"),
                                          state(3, Phase::collective, "all_reduce")});
  EXPECT_EQ(r.message,
            "watchdog: all_reduce fp32 1M on 4 GPU(s) did not finish within 3 s; rank 2 (node-b, pid 1002) stalled in "
            "its own work (computing: all_reduce (injected stall)); ranks 0, 1, 3 waited for it (in collective: "
            "all_reduce)");
  EXPECT_EQ(r.json["stalled_ranks"], nlohmann::json({2}));
  EXPECT_EQ(r.json["gpu_count"], 4);
  EXPECT_EQ(r.json["ranks"][2]["phase"], "computing");
  EXPECT_EQ(r.json["ranks"][0]["phase"], "in collective");
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

TEST(WatchdogThread, FiresOnceWhenArmedAndNotWhenDisarmed) {
  std::atomic<int> fired{0};
  std::string label;
  Watchdog w([&](const StalledPoint& p) {
    label = p.label;
    ++fired;
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
