// The emulated communicator's life over forked processes (tests only): non-blocking init, abort ending
// a hung operation, the bound on a wait for a rank that never arrives, device memory charged per
// communicator (and little for a split that shares its parent's resources).
#include <gtest/gtest.h>
#include <nccl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "tests/emulated_gpu/core/emu_core.h"
#include "tests/emulated_gpu/nccl/tests/fork_ranks.h"

namespace emu_nccl_test {
namespace {

using Clock = std::chrono::steady_clock;

// Polls ncclCommGetAsyncError until it leaves ncclInProgress or `seconds` pass (then ncclInProgress).
ncclResult_t settle(ncclComm_t comm, double seconds) {
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  ncclResult_t state = ncclInProgress;
  while (state == ncclInProgress && Clock::now() < until) {
    if (ncclCommGetAsyncError(comm, &state) != ncclSuccess) return ncclInternalError;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return state;
}

ncclConfig_t non_blocking() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

TEST(EmulatedNcclLifecycle, NonBlockingInitStaysInProgressUntilThePeerJoins) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  EXPECT_EQ(run_ranks(2, 60, [&](int rank) {
              int failures = 0;
              gpuscale_emu::set_current_device(rank);
              ncclConfig_t config = non_blocking();
              ncclComm_t comm = nullptr;
              char token = 'x';
              if (rank == 1) {  // joins only after rank 0 has seen its init in progress
                pollfd p{fds[0], POLLIN, 0};
                EMU_EXPECT(rank, poll(&p, 1, 30000) == 1 && read(fds[0], &token, 1) == 1, "rank 0's signal");
              }
              const ncclResult_t rc = ncclCommInitRankConfig(&comm, 2, id, rank, &config);
              EMU_EXPECT(rank, comm != nullptr, "a communicator handle");
              if (comm == nullptr) return 1;
              if (rank == 0) {
                EMU_EXPECT(rank, rc == ncclInProgress, "init in progress, got %d", rc);
                ncclResult_t state = ncclSuccess;
                EMU_EXPECT(rank, ncclCommGetAsyncError(comm, &state) == ncclSuccess && state == ncclInProgress,
                           "async state in progress, got %d", state);
                EMU_EXPECT(rank, write(fds[1], &token, 1) == 1, "signal");
              }
              EMU_EXPECT(rank, settle(comm, 30) == ncclSuccess, "init completes");
              double v = rank + 1.5, sum = 0;
              const ncclResult_t op = ncclAllReduce(&v, &sum, 1, ncclFloat64, ncclSum, comm, nullptr);
              EMU_EXPECT(rank, op == ncclSuccess || op == ncclInProgress, "allreduce issued, got %d", op);
              EMU_EXPECT(rank, settle(comm, 30) == ncclSuccess, "allreduce completes");
              EMU_EXPECT(rank, sum == 4.0, "sum %g", sum);
              EMU_EXPECT(rank, ncclCommFinalize(comm) == ncclSuccess && settle(comm, 10) == ncclSuccess, "finalize");
              EMU_EXPECT(rank, ncclCommDestroy(comm) == ncclSuccess, "destroy");
              return failures;
            }),
            "");
}

TEST(EmulatedNcclLifecycle, AbortEndsAnOperationAPlantedHangKeepsInProgress) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  EXPECT_EQ(run_ranks(2, 60, [&](int rank) {
              setenv("GPUSCALE_EMU_FAULTS", "hang-collective:1:2", 1);  // rank 1's second operation never arrives
              setenv("GPUSCALE_EMU_NCCL_WAIT_S", "60", 1);
              int failures = 0;
              gpuscale_emu::set_current_device(rank);
              ncclConfig_t config = non_blocking();
              ncclComm_t comm = nullptr;
              ncclCommInitRankConfig(&comm, 2, id, rank, &config);
              EMU_EXPECT(rank, settle(comm, 30) == ncclSuccess, "init");
              float v = 1, r = 0;
              ncclAllReduce(&v, &r, 1, ncclFloat32, ncclSum, comm, nullptr);
              EMU_EXPECT(rank, settle(comm, 30) == ncclSuccess && r == 2.0f, "first allreduce, got %g", r);
              gpuscale_emu::Stream* s = gpuscale_emu::stream_of(nullptr);
              const double clock_before = s->clock_us;
              ncclAllReduce(&v, &r, 1, ncclFloat32, ncclSum, comm, nullptr);
              if (rank == 0) {
                // Whatever rank 0 does, the operation cannot finish: rank 1 never contributes.
                EMU_EXPECT(rank, settle(comm, 1.0) == ncclInProgress, "second allreduce stays in progress");
                EMU_EXPECT(rank, s->clock_us == clock_before, "the stream's operation never completes");
                const auto t0 = Clock::now();
                EMU_EXPECT(rank, ncclCommAbort(comm) == ncclSuccess, "abort");
                EMU_EXPECT(rank, Clock::now() - t0 < std::chrono::seconds(10), "abort returns");
              } else {
                // Rank 0's abort ends rank 1's wait (ncclRemoteError) well before the 60 s bound.
                const ncclResult_t state = settle(comm, 40);
                EMU_EXPECT(rank, state == ncclRemoteError, "remote error after the peer's abort, got %d", state);
                EMU_EXPECT(rank, ncclCommAbort(comm) == ncclSuccess, "abort");
              }
              return failures;
            }),
            "");
}

TEST(EmulatedNcclLifecycle, AWaitForARankThatNeverArrivesIsBounded) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  // A rank's abort would end its peer's wait with ncclRemoteError: each aborts only once both have
  // seen their own bound pass (one pipe per direction).
  int to0[2], to1[2];
  ASSERT_EQ(pipe(to0), 0);
  ASSERT_EQ(pipe(to1), 0);
  EXPECT_EQ(run_ranks(2, 60, [&](int rank) {
              setenv("GPUSCALE_EMU_FAULTS", "hang-collective:1:1", 1);
              setenv("GPUSCALE_EMU_NCCL_WAIT_S", "2", 1);
              int failures = 0;
              gpuscale_emu::set_current_device(rank);
              ncclComm_t comm = nullptr;
              EMU_EXPECT(rank, ncclCommInitRank(&comm, 2, id, rank) == ncclSuccess, "init");
              const auto t0 = Clock::now();
              float v = 1, r = 0;
              const ncclResult_t rc = ncclAllReduce(&v, &r, 1, ncclFloat32, ncclSum, comm, nullptr);
              EMU_EXPECT(rank, rc == ncclSystemError, "a system error after the bound, got %d", rc);
              EMU_EXPECT(rank, Clock::now() - t0 >= std::chrono::seconds(2), "not before the bound");
              EMU_EXPECT(rank, std::string(ncclGetLastError(comm)).find("bound") != std::string::npos, "%s",
                         ncclGetLastError(comm));
              ncclResult_t state = ncclSuccess;
              ncclCommGetAsyncError(comm, &state);
              EMU_EXPECT(rank, state == ncclSystemError, "the error stays, got %d", state);
              char token = 'x';
              EMU_EXPECT(rank, write(rank == 0 ? to1[1] : to0[1], &token, 1) == 1, "signal");
              pollfd p{rank == 0 ? to0[0] : to1[0], POLLIN, 0};
              EMU_EXPECT(rank, poll(&p, 1, 30000) == 1, "the peer's signal");
              ncclCommAbort(comm);
              return failures;
            }),
            "");
}

TEST(EmulatedNcclLifecycle, CommunicatorsChargeDeviceMemoryAndSharedSplitsLittle) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  EXPECT_EQ(run_ranks(4, 60, [&](int rank) {
              int failures = 0;
              gpuscale_emu::set_current_device(rank);
              auto& dev = gpuscale_emu::device(rank);
              const std::uint64_t base = dev.memory_held;
              // Leave 1 GB free: less than one communicator's 1.6 GB (NVIDIA/nccl issues 864, 986).
              const std::uint64_t hog = dev.memory_total - dev.memory_held - 1000ULL * 1000 * 1000;
              EMU_EXPECT(rank, gpuscale_emu::charge(rank, hog), "the hog");
              ncclComm_t comm = nullptr;
              EMU_EXPECT(rank, ncclCommInitRank(&comm, 4, id, rank) == ncclSystemError, "init fails");
              EMU_EXPECT(rank, comm == nullptr, "no communicator");
              EMU_EXPECT(rank, std::string(ncclGetLastError(nullptr)).find("cuda memory allocation failed") != std::string::npos,
                         "%s", ncclGetLastError(nullptr));
              EMU_EXPECT(rank, dev.memory_held == base + hog, "nothing charged");
              gpuscale_emu::release(rank, hog);
              EMU_EXPECT(rank, ncclCommInitRank(&comm, 4, id, rank) == ncclSuccess, "init with room");
              const std::uint64_t one = dev.memory_held - base;
              EMU_EXPECT(rank, one >= 1500ULL * 1000 * 1000 && one <= 1700ULL * 1000 * 1000, "about 1.6 GB, got %llu",
                         static_cast<unsigned long long>(one));
              ncclConfig_t shared = NCCL_CONFIG_INITIALIZER;
              shared.splitShare = 1;
              ncclComm_t half = nullptr, whole = nullptr;
              EMU_EXPECT(rank, ncclCommSplit(comm, rank % 2, -rank, &half, &shared) == ncclSuccess, "shared split");
              EMU_EXPECT(rank, dev.memory_held - base - one < 100ULL * 1000 * 1000, "a shared split costs little");
              int count = 0, me = -1;
              ncclCommCount(half, &count);
              ncclCommUserRank(half, &me);
              EMU_EXPECT(rank, count == 2 && me == (rank < 2 ? 1 : 0), "keys order the child: count %d rank %d", count, me);
              int v = rank, sum = 0;
              EMU_EXPECT(rank, ncclAllReduce(&v, &sum, 1, ncclInt32, ncclSum, half, nullptr) == ncclSuccess, "child allreduce");
              EMU_EXPECT(rank, sum == (rank % 2 == 0 ? 2 : 4), "child sum %d", sum);
              const std::uint64_t before = dev.memory_held;
              EMU_EXPECT(rank, ncclCommSplit(comm, rank == 3 ? NCCL_SPLIT_NOCOLOR : 0, rank, &whole, nullptr) == ncclSuccess, "split");
              EMU_EXPECT(rank, (whole == nullptr) == (rank == 3), "NOCOLOR gives NULL");
              if (whole != nullptr) EMU_EXPECT(rank, dev.memory_held - before == one, "an unshared split charges in full");
              ncclCommDestroy(whole);
              ncclCommDestroy(half);
              ncclCommDestroy(comm);
              EMU_EXPECT(rank, dev.memory_held == base, "all released");
              return failures;
            }),
            "");
}

}  // namespace
}  // namespace emu_nccl_test
