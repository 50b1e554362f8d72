// The timing faults of GPUSCALE_TEST_FAULT (core/fault_plan.h): every kind parsed, every bad item
// refused with one line naming the variable and the item (exit 2), and which work of which rank each
// kind slows. The spending itself (a real sleep inside the timed region) is tested end to end
// (tests/e2e/e2e_fleet.py, e2e_history.py) and by FaultScope below.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/fault.h"
#include "core/fault_plan.h"
#include "usage_error.h"

namespace gpuscale {
namespace {

using test::has;
using test::usage_error;

TEST(FaultPlan, EveryKindParses) {
  const auto f = parse_timing_faults(
      "wrong:stream.triad,slow-host:h3:2,stall:all_reduce@2,slow-gpu:h1:1:4,slow-mem:h2:10,slow-nic:h4:1:3,"
      "slow-link:h5:0-1:2.5,flaky:h6:0.25:5,throttle-after:h7:1.5:8,slow-host-reported:h8:1e6,store-slow,"
      "telemetry:by-index,fail:gemm,setup-fail:stream.copy@1");
  ASSERT_EQ(f.size(), 8u);
  EXPECT_EQ(f[0].kind, FaultKind::slow_host);
  EXPECT_EQ(f[0].host, "h3");
  EXPECT_DOUBLE_EQ(f[0].factor, 2);
  EXPECT_EQ(f[1].kind, FaultKind::slow_gpu);
  EXPECT_EQ(f[1].index, 1);
  EXPECT_DOUBLE_EQ(f[1].factor, 4);
  EXPECT_EQ(f[2].kind, FaultKind::slow_mem);
  EXPECT_EQ(f[2].index, -1);  // every GPU of the host
  EXPECT_EQ(f[3].kind, FaultKind::slow_nic);
  EXPECT_EQ(f[3].index, 1);
  EXPECT_EQ(f[4].kind, FaultKind::slow_link);
  EXPECT_EQ(f[4].index, 0);
  EXPECT_EQ(f[4].peer, 1);
  EXPECT_EQ(f[5].kind, FaultKind::flaky);
  EXPECT_DOUBLE_EQ(f[5].probability, 0.25);
  EXPECT_EQ(f[6].kind, FaultKind::throttle_after);
  EXPECT_DOUBLE_EQ(f[6].after_s, 1.5);
  EXPECT_EQ(f[7].kind, FaultKind::slow_host_reported);
  EXPECT_DOUBLE_EQ(reported_factor(f, "h8"), 1e6);
  EXPECT_DOUBLE_EQ(reported_factor(f, "h3"), 1);  // slow-host is spent, not reported
  EXPECT_TRUE(parse_timing_faults("").empty());
}

// flip-bit corrupts one rank's GEMM output at a rate and slows nothing (core/fault.h draws it).
TEST(FaultPlan, FlipBitIsARateOnOneGpuThatSlowsNothing) {
  const auto f = parse_timing_faults("flip-bit:h1:1:0.5,slow-gpu:h1:0:2");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].kind, FaultKind::flip_bit);
  EXPECT_EQ(f[0].host, "h1");
  EXPECT_EQ(f[0].index, 1);
  EXPECT_DOUBLE_EQ(f[0].probability, 0.5);
  EXPECT_EQ(faults_of_rank(f, "h1", 1).size(), 1u);  // its GPU only
  EXPECT_EQ(faults_of_rank(f, "h1", 1)[0].kind, FaultKind::flip_bit);
  const auto p = planted_factors(f, "h1", 1, WorkPlace{}, 0, {});
  EXPECT_EQ(p.compute, 1);
  EXPECT_EQ(p.memory, 1);
  EXPECT_EQ(p.comm, 1);
  for (const auto& [item, why] : std::vector<std::pair<const char*, const char*>>{
           {"flip-bit:h1:1", "fields"}, {"flip-bit:h1:1:0", "(0, 1]"}, {"flip-bit:h1:1:1.5", "(0, 1]"},
           {"flip-bit:h1:x:1", "not an index"}, {"flip-bit::1:1", "not a host name"}})
    EXPECT_TRUE(has(usage_error([&] { parse_timing_faults(item); }), why)) << item;
}

TEST(FaultPlan, BadItemsAreOneLineExitTwo) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"bogus:h1:2", "not a known fault kind"},
      {"slow-hosts:h1:2", "not a known fault kind"},
      {"store-pausex", "not a known fault kind"},
      {"slow-host:h3", "fields"},
      {"slow-host:h3:", "not a finite number"},
      {"slow-host::2", "not a host name"},
      {"slow-host:h3:1", "greater than 1"},
      {"slow-host:h3:0.5", "greater than 1"},
      {"slow-host:h3:inf", "not a finite number"},
      {"slow-host:h3:nan", "not a finite number"},
      {"slow-host:h 3:2", "not a host name"},
      {"slow-host:h3:2,slow-host:h3:3", "repeats"},
      {"slow-gpu:h1:x:2", "not an index"},
      {"slow-gpu:h1:-1:2", "not an index"},
      {"slow-nic:h1:2", "fields"},
      {"slow-link:h1:0-0:2", "one GPU twice"},
      {"slow-link:h1:0:2", "A-B"},
      {"flaky:h1:1.5:2", "[0, 1]"},
      {"flaky:h1:-0.1:2", "[0, 1]"},
      {"throttle-after:h1:-1:2", ">= 0"},
      {"slow-mem:h1:2,", "empty item"},
  };
  for (const auto& [item, why] : cases) {
    const auto e = usage_error([&] { parse_timing_faults(item); });
    EXPECT_TRUE(has(e, "GPUSCALE_TEST_FAULT")) << item << ": " << e;
    EXPECT_TRUE(has(e, why)) << item << ": " << e;
  }
}

// The "known kinds" of the refusal are the table's items (core/fault_kind_table.def) and the other items;
// a kind without an item of its own (slow-storage) is neither listed nor accepted.
TEST(FaultPlan, AnUnknownKindIsRefusedNamingEveryItemOfTheTable) {
  const auto e = usage_error([] { parse_timing_faults("bogus:h1:2"); });
  for (const auto& k : fault_kinds()) {
    if (k.has_item()) {
      EXPECT_TRUE(has(e, item_syntax(k) + ", ")) << item_syntax(k) << ": " << e;
    }
  }
  EXPECT_TRUE(has(e, "wrong:, fail:, stall:, setup-fail:, telemetry:, store-pause, store-slow)")) << e;
  EXPECT_FALSE(has(e, "slow-storage")) << e;
  EXPECT_TRUE(has(usage_error([] { parse_timing_faults("slow-storage:h1:2"); }), "not a known fault kind"));
}

TEST(FaultPlan, PlacesAreCheckedAgainstTheJob) {
  const std::vector<std::string> hosts = {"n0", "n0", "n1", "n1"};
  EXPECT_EQ(usage_error([&] { check_fault_places(parse_timing_faults("slow-nic:n1:1:2,slow-link:n0:0-1:2"), hosts); }), "");
  EXPECT_TRUE(has(usage_error([&] { check_fault_places(parse_timing_faults("slow-nic:n1:2:2"), hosts); }),
                  "host 'n1' runs 2 rank(s) (local indices 0 to 1), not 2"));
  EXPECT_TRUE(has(usage_error([&] { check_fault_places(parse_timing_faults("slow-link:n0:0-5:2"), hosts); }), "not 5"));
  EXPECT_TRUE(has(usage_error([&] { check_fault_places(parse_timing_faults("slow-mem:n9:2"), hosts); }),
                  "no rank of the job runs on host 'n9'"));
}

TEST(FaultPlan, EachKindSlowsOnlyItsSite) {
  const WorkPlace alone{};                           // independent work
  const WorkPlace across{true, {1}};                 // a collective leaving the host from local rank 1
  const WorkPlace inside{false, {0, 1}};             // a collective of local ranks 0 and 1 of the host
  const WorkPlace inside_other{false, {1, 2}};       // ... of local ranks 1 and 2
  const auto at = [](const char* list, const char* host, int local, const WorkPlace& w, double elapsed = 0,
                     std::vector<double> draws = {}) {
    return planted_factors(parse_timing_faults(list), host, local, w, elapsed, draws);
  };
  auto p = at("slow-gpu:h1:1:4", "h1", 1, alone);
  EXPECT_DOUBLE_EQ(p.compute, 4);
  EXPECT_DOUBLE_EQ(p.memory, 1);
  EXPECT_DOUBLE_EQ(p.comm, 1);
  EXPECT_DOUBLE_EQ(at("slow-gpu:h1:1:4", "h1", 0, alone).compute, 1);  // another GPU of the host
  EXPECT_DOUBLE_EQ(at("slow-gpu:h1:4", "h1", 0, alone).compute, 4);    // every GPU of the host
  EXPECT_DOUBLE_EQ(at("slow-gpu:h1:4", "h2", 0, alone).compute, 1);    // another host
  EXPECT_DOUBLE_EQ(at("slow-mem:h1:3", "h1", 0, alone).memory, 3);
  EXPECT_DOUBLE_EQ(at("slow-mem:h1:3", "h1", 0, alone).compute, 1);
  // A NIC: only traffic leaving the host, only from its rail.
  EXPECT_DOUBLE_EQ(at("slow-nic:h1:1:5", "h1", 1, across).comm, 5);
  EXPECT_DOUBLE_EQ(at("slow-nic:h1:1:5", "h1", 1, inside).comm, 1);
  EXPECT_DOUBLE_EQ(at("slow-nic:h1:1:5", "h1", 0, WorkPlace{true, {0}}).comm, 1);
  EXPECT_DOUBLE_EQ(at("slow-nic:h1:1:5", "h1", 1, alone).memory, 1);
  // A link: only a group inside the host holding both ends, on either end.
  EXPECT_DOUBLE_EQ(at("slow-link:h1:0-1:2", "h1", 0, inside).comm, 2);
  EXPECT_DOUBLE_EQ(at("slow-link:h1:0-1:2", "h1", 1, inside).comm, 2);
  EXPECT_DOUBLE_EQ(at("slow-link:h1:0-1:2", "h1", 1, inside_other).comm, 1);
  EXPECT_DOUBLE_EQ(at("slow-link:h1:0-1:2", "h1", 1, WorkPlace{true, {0, 1}}).comm, 1);
  // The whole host, every site; throttle-after from its time on; flaky by its draw.
  p = at("slow-host:h1:7", "h1", 3, across);
  EXPECT_DOUBLE_EQ(p.compute * p.memory * p.comm, 343);
  EXPECT_DOUBLE_EQ(at("throttle-after:h1:10:2", "h1", 0, alone, 9.99).memory, 1);
  EXPECT_DOUBLE_EQ(at("throttle-after:h1:10:2", "h1", 0, alone, 10).memory, 2);
  EXPECT_DOUBLE_EQ(at("flaky:h1:0.3:2", "h1", 0, alone, 0, {0.29}).compute, 2);
  EXPECT_DOUBLE_EQ(at("flaky:h1:0.3:2", "h1", 0, alone, 0, {0.3}).compute, 1);
  EXPECT_DOUBLE_EQ(at("flaky:h0:0.9:3,flaky:h1:0.3:2", "h1", 0, alone, 0, {0.95, 0.1}).compute, 2);  // its own draw
  // Factors multiply; the reported variant spends nothing.
  EXPECT_DOUBLE_EQ(at("slow-host:h1:2,slow-mem:h1:3", "h1", 0, alone).memory, 6);
  EXPECT_DOUBLE_EQ(at("slow-host-reported:h1:9", "h1", 0, alone).memory, 1);
  EXPECT_TRUE(faults_of_rank(parse_timing_faults("slow-nic:h1:1:5"), "h1", 0).empty());
  EXPECT_EQ(faults_of_rank(parse_timing_faults("slow-nic:h1:1:5"), "h1", 1).size(), 1u);
}

// The time is spent, not reported: a scope over a planted memory fault makes spend_planted sleep
// (F - 1) x the work's seconds (at least: a sleep may run long, never short), and nothing elsewhere.
TEST(FaultScope, SpendsThePlantedTimeAtItsSiteOnly) {
  plant_faults(parse_timing_faults("slow-mem:h1:3"), "h1", 0);
  {
    const FaultScope scope(WorkPlace{});
    EXPECT_TRUE(planted_at(FaultSite::memory));
    EXPECT_FALSE(planted_at(FaultSite::compute));
    const auto t0 = std::chrono::steady_clock::now();
    const double slept = spend_planted(FaultSite::memory, 0.01);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_GE(slept, 0.02);
    EXPECT_GE(wall, slept * 0.999);
    EXPECT_EQ(spend_planted(FaultSite::compute, 0.01), 0);
  }
  EXPECT_FALSE(planted_at(FaultSite::memory));  // outside a scope nothing is slowed
  EXPECT_EQ(spend_planted(FaultSite::memory, 0.01), 0);
  plant_faults({}, "h1", 0);
  const FaultScope none(WorkPlace{});
  EXPECT_EQ(spend_planted(FaultSite::memory, 0.01), 0);
}

}  // namespace
}  // namespace gpuscale
