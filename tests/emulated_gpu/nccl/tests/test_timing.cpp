// The emulated NCCL's clock (tests only): every member's operation ends at the latest member's start
// plus the model's duration, computed here from the stated model (collective_model.h's figures) and the
// device's GpuModel, without the library's own formula. Ranks start at seeded, different times: the late
// rank decides everyone's end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "tests/emulated_gpu/core/emu_core.h"
#include "tests/emulated_gpu/nccl/tests/fork_ranks.h"
#include "tests/emulated_gpu/nccl/tests/test_values.h"

namespace emu_nccl_test {
namespace {

constexpr int kRanks = 4;

struct Setting {
  const char* name;    // the test's name
  const char* hosts;   // GPUSCALE_TEST_HOSTS ("" : unset)
  const char* faults;  // GPUSCALE_EMU_FAULTS
  bool across;         // the members span hosts (NIC)
  double slow;         // the planted factor that applies
};

double skew_us(int rank) { return 100 + static_cast<double>(hash3(77, static_cast<std::uint64_t>(rank), 0) % 5000); }

// nccl-tests: time = bytes x factor / busbw, plus one latency per ring step.
double expected_us(const gpuscale_emu::GpuModel& m, const Setting& s, double bytes, double factor, int steps) {
  const double bw = s.across ? m.nic_gbps * m.collective_nic_efficiency : m.nvlink_gbps * m.collective_nvlink_efficiency;
  const double lat = s.across ? m.nic_latency_us : m.nvlink_latency_us;
  return (steps * lat + bytes * factor / (bw * 1e3)) * s.slow;
}

class Timing : public ::testing::TestWithParam<Setting> {};

TEST_P(Timing, TheLatestStartPlusTheRingTimeEndsEveryRank) {
  const Setting s = GetParam();
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  EXPECT_EQ(run_ranks(kRanks, 60, [&](int rank) {
              if (*s.hosts) setenv("GPUSCALE_TEST_HOSTS", s.hosts, 1);
              setenv("GPUSCALE_EMU_FAULTS", s.faults, 1);
              int failures = 0;
              gpuscale_emu::set_current_device(rank);
              const gpuscale_emu::GpuModel& m = gpuscale_emu::device(rank).model;
              ncclComm_t comm = nullptr;
              if (ncclCommInitRank(&comm, kRanks, id, rank) != ncclSuccess) return 2;
              gpuscale_emu::Stream* stream = gpuscale_emu::stream_of(nullptr);
              gpuscale_emu::Operation skew;
              skew.what = "test skew";
              skew.duration_us = skew_us(rank);
              gpuscale_emu::enqueue(stream, skew);
              double latest = 0;
              // Each launch costs the host the model's launch overhead (core/emu_core.h): the skew starts
              // one launch in, and the collective, launched a launch later, starts when its skew ends.
              for (int r = 0; r < kRanks; ++r) latest = std::max(latest, m.launch_overhead_us + skew_us(r));
              const std::size_t count = std::size_t{1} << 20;  // 4 MiB of floats: several chunks
              std::vector<float> a(count, 1.0f), b(count);
              EMU_EXPECT(rank, ncclAllReduce(a.data(), b.data(), count, ncclFloat32, ncclSum, comm, nullptr) == ncclSuccess, "ar");
              const double n = kRanks;
              double end = latest + m.collective_connect_us + expected_us(m, s, 4.0 * count, 2 * (n - 1) / n, 2 * (kRanks - 1));
              EMU_EXPECT(rank, std::abs(stream->clock_us - end) < 1e-6 * end, "allreduce ends at %.6f, expected %.6f",
                         stream->clock_us, end);
              EMU_EXPECT(rank, b[0] == 4.0f && b[count - 1] == 4.0f, "sum");
              // Everyone starts together now; no connection to pay a second time.
              std::vector<double> g(8 * kRanks);
              double mine[8] = {};
              EMU_EXPECT(rank, ncclAllGather(mine, g.data(), 8, ncclFloat64, comm, nullptr) == ncclSuccess, "ag");
              end += expected_us(m, s, 64.0 * kRanks, (n - 1) / n, kRanks - 1);
              EMU_EXPECT(rank, std::abs(stream->clock_us - end) < 1e-6 * end, "allgather ends at %.6f, expected %.6f",
                         stream->clock_us, end);
              ncclCommDestroy(comm);
              return failures;
            }),
            "");
}

INSTANTIATE_TEST_SUITE_P(Links, Timing,
                         ::testing::Values(Setting{"nvlink", "", "", false, 1},
                                           Setting{"slow_link", "a,a,a,a", "slow-link:a:2", false, 2},
                                           Setting{"nic", "a,a,b,b", "", true, 1},
                                           Setting{"slow_nic", "a,a,b,b", "slow-nic:b:3,slow-link:a:5", true, 3}),
                         [](const ::testing::TestParamInfo<Setting>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace emu_nccl_test
