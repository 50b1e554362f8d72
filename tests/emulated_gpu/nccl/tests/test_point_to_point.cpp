// Grouped ncclSend/ncclRecv as the project's alltoallv and sendrecv issue them (collectives/nccl/
// nccl_communicator.cpp): uneven counts, zero counts skipped, messages larger than a channel, over 2, 3
// and 4 processes (tests only).
#include <gtest/gtest.h>

#include <vector>

#include "tests/emulated_gpu/core/emu_core.h"
#include "tests/emulated_gpu/nccl/tests/fork_ranks.h"
#include "tests/emulated_gpu/nccl/tests/test_values.h"

namespace emu_nccl_test {
namespace {

// Elements rank s sends rank d: a third of the pairs nothing, the rest up to 100000 floats (400 KB,
// more than one 256 KiB channel).
std::size_t pair_count(std::uint64_t seed, int s, int d) {
  const std::uint64_t h = hash3(seed, static_cast<std::uint64_t>(s), static_cast<std::uint64_t>(d));
  return h % 3 == 0 ? 0 : 1 + static_cast<std::size_t>((h >> 8) % 100000);
}
float value(std::uint64_t seed, int s, int d, std::size_t i) {
  return static_cast<float>(hash3(seed ^ static_cast<std::uint64_t>(s) << 20, static_cast<std::uint64_t>(d), i) % 1000000);
}

int alltoallv(ncclComm_t comm, int rank, int n, std::uint64_t seed) {
  int failures = 0;
  std::vector<std::vector<float>> out(static_cast<std::size_t>(n)), in(static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p) {
    auto& o = out[static_cast<std::size_t>(p)];
    o.resize(pair_count(seed, rank, p));
    for (std::size_t i = 0; i < o.size(); ++i) o[i] = value(seed, rank, p, i);
    in[static_cast<std::size_t>(p)].assign(pair_count(seed, p, rank), -1.0f);
  }
  EMU_EXPECT(rank, ncclGroupStart() == ncclSuccess, "group start");
  for (int p = 0; p < n; ++p) {
    const auto& o = out[static_cast<std::size_t>(p)];
    auto& i = in[static_cast<std::size_t>(p)];
    if (!o.empty()) EMU_EXPECT(rank, ncclSend(o.data(), o.size(), ncclFloat32, p, comm, nullptr) == ncclSuccess, "send");
    if (!i.empty()) EMU_EXPECT(rank, ncclRecv(i.data(), i.size(), ncclFloat32, p, comm, nullptr) == ncclSuccess, "recv");
  }
  EMU_EXPECT(rank, ncclGroupEnd() == ncclSuccess, "group end");
  for (int p = 0; p < n; ++p) {
    const auto& got = in[static_cast<std::size_t>(p)];
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < got.size(); ++i) wrong += got[i] != value(seed, p, rank, i);
    EMU_EXPECT(rank, wrong == 0, "%zu of %zu elements from rank %d differ", wrong, got.size(), p);
  }
  return failures;
}

int ring(ncclComm_t comm, int rank, int n, std::uint64_t seed) {
  int failures = 0;
  const std::size_t count = 70001;
  std::vector<double> out(count), in(count, -1);
  for (std::size_t i = 0; i < count; ++i) out[i] = value(seed, rank, 0, i);
  EMU_EXPECT(rank, ncclGroupStart() == ncclSuccess, "group start");
  EMU_EXPECT(rank, ncclSend(out.data(), count, ncclFloat64, (rank + 1) % n, comm, nullptr) == ncclSuccess, "send");
  EMU_EXPECT(rank, ncclRecv(in.data(), count, ncclFloat64, (rank - 1 + n) % n, comm, nullptr) == ncclSuccess, "recv");
  EMU_EXPECT(rank, ncclGroupEnd() == ncclSuccess, "group end");
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i) wrong += in[i] != value(seed, (rank - 1 + n) % n, 0, i);
  EMU_EXPECT(rank, wrong == 0, "%zu elements from the ring differ", wrong);
  return failures;
}

class PointToPoint : public ::testing::TestWithParam<int> {};

TEST_P(PointToPoint, GroupedAlltoallvAndRingDeliverEveryByte) {
  const int n = GetParam();
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  EXPECT_EQ(run_ranks(n, 120, [&](int rank) {
              gpuscale_emu::set_current_device(rank % gpuscale_emu::device_count());
              ncclComm_t comm = nullptr;
              if (ncclCommInitRank(&comm, n, id, rank) != ncclSuccess) return 2;
              int failures = 0;
              for (std::uint64_t seed = 1; seed <= 3; ++seed) {  // the channels' counters carry over between groups
                failures += alltoallv(comm, rank, n, seed * 7919 + static_cast<std::uint64_t>(n));
                failures += ring(comm, rank, n, seed);
              }
              ncclCommDestroy(comm);
              return failures > 0 ? 1 : 0;
            }),
            "");
}

INSTANTIATE_TEST_SUITE_P(Ranks, PointToPoint, ::testing::Values(2, 3, 4));

}  // namespace
}  // namespace emu_nccl_test
