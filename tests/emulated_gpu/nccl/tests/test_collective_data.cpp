// Exact results of every collective the project calls, over 2, 3 and 4 processes, every dtype and op
// gpuscale uses, in and out of place, at sizes that take one chunk and several (tests only).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tests/emulated_gpu/core/emu_core.h"
#include "tests/emulated_gpu/nccl/tests/fork_ranks.h"
#include "tests/emulated_gpu/nccl/tests/test_values.h"

namespace emu_nccl_test {
namespace {

const ncclDataType_t kTypes[] = {ncclFloat64, ncclFloat32, ncclFloat16, ncclBfloat16,
                                 ncclFloat8e4m3, ncclFloat8e5m2, ncclInt32, ncclInt8};
const ncclRedOp_t kOps[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};
enum class Coll { all_reduce, reduce, reduce_scatter, broadcast, all_gather };

struct Case {
  Coll coll;
  ncclDataType_t type;
  ncclRedOp_t op;
  std::size_t count;  // the call's count
  bool in_place;
  std::uint64_t seed;
};

// Runs one case on this rank and returns how many result elements differ from the oracle; appends the
// result's bytes' hash to `hashes` so the parent can compare ranks bitwise.
int run_case(ncclComm_t comm, int rank, int n, const Case& c, std::vector<std::uint64_t>& hashes) {
  const std::size_t es = elem_size(c.type), N = static_cast<std::size_t>(n);
  const int root = static_cast<int>(c.seed % N);
  const std::size_t send_elems = c.coll == Coll::reduce_scatter ? c.count * N : c.count;
  const std::size_t recv_elems = c.coll == Coll::all_gather ? c.count * N : c.coll == Coll::reduce_scatter ? c.count : c.count;
  std::vector<std::byte> send(send_elems * es + 1), recv(std::max(send_elems, recv_elems) * es + 1);
  const ncclRedOp_t input_op = c.coll == Coll::broadcast || c.coll == Coll::all_gather ? ncclSum : c.op;
  // In place: the input sits where the project puts it inside the receive buffer.
  std::byte* in = c.in_place ? recv.data() + (c.coll == Coll::all_gather ? static_cast<std::size_t>(rank) * c.count * es : 0)
                             : send.data();
  for (std::size_t i = 0; i < send_elems; ++i) encode(c.type, input(c.seed, rank, i, c.type, input_op), in + i * es);
  std::byte* out = c.in_place && c.coll == Coll::reduce_scatter ? recv.data() + static_cast<std::size_t>(rank) * c.count * es
                                                                 : recv.data();
  ncclResult_t rc = ncclInvalidUsage;
  switch (c.coll) {
    case Coll::all_reduce: rc = ncclAllReduce(in, out, c.count, c.type, c.op, comm, nullptr); break;
    case Coll::reduce: rc = ncclReduce(in, out, c.count, c.type, c.op, root, comm, nullptr); break;
    case Coll::reduce_scatter: rc = ncclReduceScatter(in, out, c.count, c.type, c.op, comm, nullptr); break;
    case Coll::broadcast: rc = ncclBroadcast(in, out, c.count, c.type, root, comm, nullptr); break;
    case Coll::all_gather: rc = ncclAllGather(in, out, c.count, c.type, comm, nullptr); break;
  }
  if (rc != ncclSuccess) return 1000000;
  if (c.coll == Coll::reduce && rank != root) return 0;
  int wrong = 0;
  const std::size_t checked = c.coll == Coll::all_gather ? c.count * N : c.count;
  std::uint64_t h = 1469598103934665603ULL;
  for (std::size_t i = 0; i < checked; ++i) {
    Expected e{0, 0};
    if (c.coll == Coll::broadcast) e = {input(c.seed, root, i, c.type, ncclSum), 0};
    else if (c.coll == Coll::all_gather) e = {input(c.seed, static_cast<int>(i / c.count), i % c.count, c.type, ncclSum), 0};
    else if (c.coll == Coll::reduce_scatter) e = reduced(c.seed, n, static_cast<std::size_t>(rank) * c.count + i, c.type, c.op);
    else e = reduced(c.seed, n, i, c.type, c.op);
    const double got = decode(c.type, out + i * es);
    if (!(std::abs(got - e.value) <= e.tolerance)) {
      if (wrong < 3)
        std::fprintf(stderr, "rank %d coll %d type %d op %d count %zu in_place %d: [%zu] = %g, expected %g\n", rank,
                     static_cast<int>(c.coll), c.type, c.op, c.count, c.in_place, i, got, e.value);
      ++wrong;
    }
    for (std::size_t b = 0; b < es; ++b) h = (h ^ static_cast<std::uint64_t>(out[i * es + b])) * 1099511628211ULL;
  }
  if (c.coll == Coll::all_reduce) hashes.push_back(h);
  return wrong;
}

std::vector<Case> cases(int n) {
  std::vector<Case> all;
  std::uint64_t seed = 12345 + static_cast<std::uint64_t>(n);
  for (auto type : kTypes) {
    // Just over the 1 MiB staging slot, so large messages go in chunks; reduce_scatter's per-rank count
    // makes n blocks of that.
    const std::size_t big = ((std::size_t{1} << 20) + 4096) / elem_size(type) + 3;
    for (bool in_place : {false, true}) {
      for (auto op : kOps)
        for (Coll coll : {Coll::all_reduce, Coll::reduce, Coll::reduce_scatter})
          for (std::size_t count : {std::size_t{1}, std::size_t{777}, coll == Coll::reduce_scatter ? big / 2 : big})
            all.push_back({coll, type, op, count, in_place, ++seed});
      for (Coll coll : {Coll::broadcast, Coll::all_gather})
        for (std::size_t count : {std::size_t{0}, std::size_t{5}, big}) all.push_back({coll, type, ncclSum, count, in_place, ++seed});
    }
  }
  return all;
}

class CollectiveData : public ::testing::TestWithParam<int> {};

TEST_P(CollectiveData, EveryCollectiveTypeAndOpIsExactAndRanksAgreeBitwise) {
  const int n = GetParam();
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  const std::string dir = ::testing::TempDir() + "emu_nccl_hashes_" + std::to_string(getpid());
  const std::string problems = run_ranks(n, 240, [&](int rank) {
    gpuscale_emu::set_current_device(rank % gpuscale_emu::device_count());
    ncclComm_t comm = nullptr;
    if (ncclCommInitRank(&comm, n, id, rank) != ncclSuccess) return 2;
    int failures = 0;
    std::vector<std::uint64_t> hashes;
    for (const Case& c : cases(n)) failures += run_case(comm, rank, n, c, hashes) > 0;
    std::ofstream(dir + "." + std::to_string(rank)) << testing::PrintToString(hashes);
    if (ncclCommDestroy(comm) != ncclSuccess) ++failures;
    return failures > 0 ? 1 : 0;
  });
  EXPECT_EQ(problems, "");
  std::string first;
  for (int r = 0; r < n; ++r) {
    std::ifstream f(dir + "." + std::to_string(r));
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::remove((dir + "." + std::to_string(r)).c_str());
    EXPECT_FALSE(text.empty()) << "rank " << r;
    if (r == 0) first = text;
    EXPECT_EQ(text, first) << "rank " << r << "'s all_reduce results differ bitwise from rank 0's";
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, CollectiveData, ::testing::Values(2, 3, 4));

}  // namespace
}  // namespace emu_nccl_test
