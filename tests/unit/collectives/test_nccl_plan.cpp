// collectives/nccl/nccl_plan: NCCL's version codes, the dtype/op support table, nccl-tests' alltoall
// choice and per-iteration offsets, the watchdog's decisions and what a row records about NCCL.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "collectives/nccl/nccl_plan.h"

namespace gpuscale::nccl {
namespace {

CollectiveCase make(Collective coll, DType t, RedOp op = RedOp::sum, bool in_place = false) {
  CollectiveCase c;
  c.coll = coll;
  c.dtype = t;
  c.op = op;
  c.in_place = in_place;
  c.size_bytes = 1 << 20;
  return c;
}

TEST(NcclPlan, VersionCodesFollowNcclsEncoding) {
  EXPECT_EQ(version_code(2, 28, 9), 22809);  // NCCL_VERSION_CODE of nccl.h 2.28.9
  EXPECT_EQ(version_code(2, 8, 4), 2804);    // the old encoding up to 2.8
  EXPECT_EQ(version_code(2, 9, 6), 20906);
  EXPECT_EQ(version_text(22809), "2.28.9");
  EXPECT_EQ(version_text(2804), "2.8.4");
  EXPECT_EQ(version_text(version_code(3, 0, 1)), "3.0.1");
  EXPECT_LT(version_code(2, 8, 4), version_code(2, 9, 0));  // codes order like versions
}

TEST(NcclPlan, EveryCollectiveDtypeRunsOnACurrentNccl) {
  const int now = version_code(2, 28, 9);
  for (const auto& spec : collective_table())
    for (DType t : {DType::fp64, DType::fp32, DType::fp16, DType::bf16, DType::int32, DType::int8, DType::fp8_e4m3,
                    DType::fp8_e5m2})
      for (RedOp op : {RedOp::sum, RedOp::prod, RedOp::min, RedOp::max, RedOp::avg}) {
        if (!spec.reduces && op != RedOp::sum) continue;
        EXPECT_EQ(unsupported(make(spec.id, t, op), now, 9), std::nullopt) << spec.name << " " << dtype_name(t);
      }
}

TEST(NcclPlan, OlderLibrariesAndGpusLackTypesAndOps) {
  const auto bf16 = unsupported(make(Collective::all_reduce, DType::bf16), version_code(2, 9, 9), 8);
  ASSERT_TRUE(bf16);
  EXPECT_NE(bf16->find("2.9.9 has no bfloat16 (added in 2.10)"), std::string::npos) << *bf16;
  EXPECT_TRUE(unsupported(make(Collective::all_reduce, DType::fp32, RedOp::avg), version_code(2, 9, 9), 8));
  EXPECT_FALSE(unsupported(make(Collective::all_reduce, DType::fp32, RedOp::avg), version_code(2, 10, 3), 8));
  EXPECT_TRUE(unsupported(make(Collective::all_gather, DType::fp8_e5m2), version_code(2, 23, 4), 9));
  // fp8 moves on any GPU but reduces only on compute capability 9.0+.
  EXPECT_FALSE(unsupported(make(Collective::all_gather, DType::fp8_e4m3), version_code(2, 24, 3), 8));
  const auto fp8 = unsupported(make(Collective::reduce_scatter, DType::fp8_e4m3), version_code(2, 24, 3), 8);
  ASSERT_TRUE(fp8);
  EXPECT_NE(fp8->find("compute capability 9.0"), std::string::npos);
  EXPECT_FALSE(unsupported(make(Collective::reduce_scatter, DType::fp8_e4m3), version_code(2, 24, 3), 0))
      << "an unknown GPU is not refused";
  const auto tf32 = unsupported(make(Collective::broadcast, DType::tf32), version_code(2, 28, 9), 9);
  ASSERT_TRUE(tf32);
  EXPECT_EQ(*tf32, "NCCL has no tf32 type");
}

TEST(NcclPlan, InPlaceFollowsWhatNcclTestsChecks) {
  const int now = version_code(2, 28, 9);
  for (const auto& spec : collective_table()) {
    const auto why = unsupported(make(spec.id, DType::fp32, RedOp::sum, true), now, 9);
    const bool checked = spec.in_place && spec.id != Collective::sendrecv;
    EXPECT_EQ(!why.has_value(), checked) << spec.name << ": " << why.value_or("");
  }
}

TEST(NcclPlan, AlltoallCallsWhatNcclTestsCalls) {
  EXPECT_TRUE(native_alltoall(version_code(2, 28, 9), version_code(2, 28, 9), true));
  EXPECT_FALSE(native_alltoall(version_code(2, 28, 9), version_code(2, 27, 7), true)) << "older library at run time";
  EXPECT_FALSE(native_alltoall(version_code(2, 27, 7), version_code(2, 28, 9), true)) << "built against older headers";
  EXPECT_FALSE(native_alltoall(version_code(2, 28, 9), version_code(2, 28, 9), false)) << "the lookup found nothing";
}

TEST(NcclPlan, NcclsLogGoesToAFileOfItsOwnUnlessTheUserSetNcclDebug) {
  const auto p = net_log_plan({}, "/tmp/gpuscale-nccl-abc");
  EXPECT_EQ(p.path, "/tmp/gpuscale-nccl-abc/nccl.%h.%p.log");
  EXPECT_EQ(p.set.at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(p.set.at("NCCL_DEBUG_SUBSYS"), "INIT,NET");
  EXPECT_EQ(p.set.at("NCCL_DEBUG_FILE"), p.path);
  EXPECT_TRUE(p.why_not.empty());
  const auto users = net_log_plan({{"NCCL_DEBUG", "WARN"}}, "/tmp/x");
  EXPECT_TRUE(users.set.empty()) << "the user's NCCL_DEBUG is never overridden";
  EXPECT_NE(users.why_not.find("NCCL_DEBUG=WARN is the user's"), std::string::npos) << users.why_not;
  EXPECT_TRUE(net_log_plan({}, "").set.empty());
}

TEST(NcclPlan, NcclsLogFolderIsKeptAndNamedWhenACommunicatorFailed) {
  NetLogFolder folder("/tmp/gpuscale-nccl-Q7xk2a");
  EXPECT_TRUE(folder.remove_at_exit()) << "a clean run leaves nothing behind";
  const std::string note = folder.keep();
  EXPECT_FALSE(folder.remove_at_exit()) << "a failed run keeps NCCL's log";
  EXPECT_NE(note.find("NCCL's log is kept in /tmp/gpuscale-nccl-Q7xk2a"), std::string::npos) << note;
  EXPECT_EQ(folder.keep(), note) << "kept once, named the same in every error";
  NetLogFolder none;  // the user's NCCL_DEBUG: no folder of ours
  EXPECT_EQ(none.keep(), "");
  EXPECT_FALSE(none.remove_at_exit());
}

TEST(NcclPlan, TheNetworkNcclChoseIsReadFromItsLog) {
  // Lines as NCCL 2.18-2.28 print them (init.cc "Using network %s", net_ib "NET/IB : Using...").
  const std::string ib =
      "gpu7:4242:4242 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.7<0>\n"
      "gpu7:4242:4242 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.0.0.7<0>\n"
      "gpu7:4242:4242 [0] NCCL INFO Using network IB\n"
      "gpu7:4242:4242 [0] NCCL INFO ncclCommInitRankConfig comm 0x55 rank 0 nranks 16 - Init COMPLETE\n";
  const auto j = network_from_log(ib);
  EXPECT_EQ(j["network"], "IB");
  EXPECT_FALSE(j["sockets"].get<bool>());
  EXPECT_EQ(j["devices"], " [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.0.0.7<0>");
  // A fallback to sockets (no RDMA providers, or NCCL_IB_DISABLE) is named as such.
  const auto sock = network_from_log(ib + "gpu7:4242:4242 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.0.7<0>\r\n"
                                          "gpu7:4242:4242 [0] NCCL INFO Using network Socket\n");
  EXPECT_EQ(sock["network"], "Socket");
  EXPECT_TRUE(sock["sockets"].get<bool>());
  EXPECT_EQ(sock["devices"], " [0]eth0:10.1.0.7<0>");
  // A plugin's network: its name, its own device lines unknown.
  const auto plugin = network_from_log("h:1:1 [0] NCCL INFO Using network AWS Libfabric\n");
  EXPECT_EQ(plugin["network"], "AWS Libfabric");
  EXPECT_TRUE(plugin["devices"].is_null());
  EXPECT_TRUE(network_from_log("h:1:1 [0] NCCL INFO cudaDriverVersion 13000\n").is_null());
  EXPECT_TRUE(network_from_log("").is_null());
}

TEST(NcclPlan, IterationsMoveThroughTheSpanLikeNcclTests) {
  // nccl-tests: steps = maxbytes / totalbytes, shift = totalbytes * (iter % steps).
  EXPECT_EQ(iteration_shift(1024, 4096, 0), 0u);
  EXPECT_EQ(iteration_shift(1024, 4096, 1), 1024u);
  EXPECT_EQ(iteration_shift(1024, 4096, 3), 3072u);
  EXPECT_EQ(iteration_shift(1024, 4096, 4), 0u);
  EXPECT_EQ(iteration_shift(1000, 4096, 5), 1000u);  // 4 steps of 1000 fit: 5 % 4 = 1
  EXPECT_EQ(iteration_shift(4096, 4096, 7), 0u);     // the largest size never moves
  EXPECT_EQ(iteration_shift(0, 4096, 7), 0u);
  EXPECT_EQ(iteration_shift(8192, 4096, 7), 0u);
  for (std::uint64_t it = 0; it < 50; ++it) EXPECT_LE(iteration_shift(768, 10000, it) + 768, 10000u);
}

TEST(NcclPlan, WatchdogVerdicts) {
  EXPECT_EQ(wait_verdict(true, false, 1, 10), WaitVerdict::done);
  EXPECT_EQ(wait_verdict(false, false, 1, 10), WaitVerdict::wait);
  EXPECT_EQ(wait_verdict(false, false, 10.5, 10), WaitVerdict::timed_out);
  EXPECT_EQ(wait_verdict(true, false, 10.5, 10), WaitVerdict::done) << "completion counts even when late";
  EXPECT_EQ(wait_verdict(false, true, 1, 10), WaitVerdict::failed);
  EXPECT_EQ(wait_verdict(true, true, 1, 10), WaitVerdict::failed) << "an error wins over completion";
  EXPECT_EQ(wait_verdict(false, false, 1e9, 0), WaitVerdict::wait) << "-T 0 never times out";
  EXPECT_EQ(wait_verdict(false, false, 1e9, -1), WaitVerdict::wait);
}

// A call NCCL refuses (its own return code) fails the row; asynchronous errors and timeouts abort.
TEST(NcclPlan, SynchronousErrorsFailTheRowAsynchronousOnesAbort) {
  // ncclResult_t: 1 unhandled CUDA error, 2 system, 3 internal, 4 invalid argument, 5 invalid usage,
  // 6 remote error.
  for (int code = 1; code <= 6; ++code) {
    EXPECT_EQ(error_action(code, false, false), ErrorAction::fail_row) << code;
    EXPECT_EQ(error_action(code, true, false), ErrorAction::abort) << code;
    EXPECT_EQ(error_action(code, false, true), ErrorAction::abort) << code;
  }
  for (bool async : {false, true}) {
    EXPECT_EQ(error_action(kNcclSuccess, async, false), ErrorAction::none);
    EXPECT_EQ(error_action(kNcclInProgress, async, false), ErrorAction::none);
    EXPECT_EQ(error_action(kNcclSuccess, async, true), ErrorAction::abort) << "a timeout aborts";
  }
}

TEST(NcclPlan, RowsRecordAlgorithmAndNvlsNote) {
  const auto& ar = collective_spec(Collective::all_reduce);
  const auto& ag = collective_spec(Collective::all_gather);
  auto j = row_details(ar, 8, 9, {});
  EXPECT_NE(j["nccl_algo"].get<std::string>().find("chosen by NCCL"), std::string::npos);
  EXPECT_TRUE(j.contains("busbw_note"));
  EXPECT_NE(j["busbw_note"].get<std::string>().find("NVLS"), std::string::npos);
  EXPECT_FALSE(row_details(ag, 8, 9, {}).contains("busbw_note")) << "no reduction, no in-switch reduction";
  EXPECT_FALSE(row_details(ar, 8, 8, {}).contains("busbw_note")) << "no NVLS before compute capability 9.0";
  EXPECT_FALSE(row_details(ar, 1, 9, {}).contains("busbw_note"));
  EXPECT_FALSE(row_details(ar, 8, 9, {{"NCCL_NVLS_ENABLE", "0"}}).contains("busbw_note"));
  j = row_details(ar, 8, 9, {{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "Simple"}});
  EXPECT_EQ(j["nccl_algo"], "Ring");
  EXPECT_EQ(j["nccl_proto"], "Simple");
}

// Issue 46, finding 5: communicators are split from one job-wide communicator.
TEST(NcclPlan, SplitArgumentsGiveOneCommunicatorPerGroup) {
  EXPECT_EQ(split_args(false, 3, 1).colour, kSplitNoColor);
  EXPECT_EQ(split_args(true, -1, 0).colour, kSplitNoColor);  // no first member: no group
  EXPECT_EQ(split_args(true, 0, 0).colour, 0);
  // Random tilings of a world into disjoint groups (and idle ranks): every member of a group gives the
  // same colour, different groups different ones, none negative; the keys order each group as its MPI
  // ranks (the NCCL rank is the group rank); an idle rank gives NCCL_SPLIT_NOCOLOR.
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    const int world = 1 + static_cast<int>(rng() % 16);
    std::vector<int> group_of(static_cast<std::size_t>(world));
    const int groups = 1 + static_cast<int>(rng() % 4);
    for (auto& g : group_of) g = static_cast<int>(rng() % (groups + 1)) - 1;  // -1: idle
    std::map<int, std::vector<int>> members;
    for (int r = 0; r < world; ++r)
      if (group_of[static_cast<std::size_t>(r)] >= 0) members[group_of[static_cast<std::size_t>(r)]].push_back(r);
    std::map<int, int> colour_of_group;
    std::set<int> colours;
    for (int r = 0; r < world; ++r) {
      const int g = group_of[static_cast<std::size_t>(r)];
      if (g < 0) {
        EXPECT_EQ(split_args(false, 0, 0).colour, kSplitNoColor);
        continue;
      }
      const auto& ms = members[g];
      const int group_rank = static_cast<int>(std::find(ms.begin(), ms.end(), r) - ms.begin());
      const SplitArgs a = split_args(true, ms.front(), group_rank);
      EXPECT_GE(a.colour, 0);
      EXPECT_EQ(a.key, group_rank);
      if (colour_of_group.count(g)) {
        EXPECT_EQ(colour_of_group[g], a.colour);
      }
      colour_of_group[g] = a.colour;
      colours.insert(a.colour);
    }
    EXPECT_EQ(colours.size(), colour_of_group.size()) << "two groups share a colour";
  }
}

TEST(NcclPlan, MemoryLedgerHoldsWhatLivesAndItsPeak) {
  MemoryLedger l;
  EXPECT_EQ(l.held(), 0u);
  EXPECT_EQ(l.take_peak(), 0u);
  const int job = l.add(1600);
  const int a = l.add(16);
  const int b = l.add(16);
  EXPECT_EQ(l.held(), 1632u);
  l.remove(b);
  l.remove(b);    // twice: nothing more
  l.remove(999);  // unknown: nothing
  EXPECT_EQ(l.held(), 1616u);
  EXPECT_EQ(l.take_peak(), 1632u);  // b was alive since the last take
  EXPECT_EQ(l.take_peak(), 1616u);  // the peak starts again from what is held
  l.remove(a);
  l.remove(job);
  EXPECT_EQ(l.held(), 0u);
  EXPECT_EQ(l.take_peak(), 1616u);
  // Random lives against a replay: held is the sum of the live entries, take_peak the most held between takes.
  std::mt19937 rng(46);
  for (int trial = 0; trial < 200; ++trial) {
    MemoryLedger m;
    std::map<int, std::uint64_t> live;
    std::uint64_t most = 0;
    for (int step = 0; step < 40; ++step) {
      const auto roll = rng() % 4;
      if (roll == 0 && !live.empty()) {
        auto it = live.begin();
        std::advance(it, static_cast<long>(rng() % live.size()));
        m.remove(it->first);
        live.erase(it);
      } else if (roll == 1) {
        std::uint64_t now = 0;
        for (const auto& [e, v] : live) now += v;
        EXPECT_EQ(m.take_peak(), std::max(most, now));
        most = now;
      } else {
        const std::uint64_t bytes = rng() % 5000;
        live[m.add(bytes)] = bytes;
      }
      std::uint64_t now = 0;
      for (const auto& [e, v] : live) now += v;
      EXPECT_EQ(m.held(), now);
      most = std::max(most, now);
    }
  }
}

}  // namespace
}  // namespace gpuscale::nccl
