// collectives/collective_table: counts, size column, algbw bytes and bus factors against nccl-tests'
// rules (GetCollByteCount / GetBw of each *_perf), written out independently here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "collectives/collective_table.h"

namespace gpuscale {
namespace {

using u64 = std::uint64_t;

// nccl-tests: base = (count / nranks) & -(16 / eltSize)
u64 nccl_base(u64 count, u64 es, int n) { return (count / static_cast<u64>(n)) & (u64{0} - 16 / es); }

struct Model {
  u64 send, recv, param, send_off, recv_off;
  double algbw_bytes, factor;
};

Model nccl_model(Collective c, u64 bytes, u64 es, int n) {
  const u64 count = bytes / es, base = nccl_base(count, es, n), un = static_cast<u64>(n);
  const double nd = n;
  switch (c) {
    case Collective::all_reduce:
      return {count, count, count, 0, 0, double(count * es), 2 * (nd - 1) / nd};
    case Collective::all_gather:
      return {base, base * un, base, base, 0, double(base * es) * nd, (nd - 1) / nd};
    case Collective::reduce_scatter:
      return {base * un, base, base, 0, base, double(base * es) * nd, (nd - 1) / nd};
    case Collective::alltoall:
      return {base * un, base * un, base, 0, 0, double(base * es) * nd, (nd - 1) / nd};
    case Collective::alltoallv:  // uniform: alltoall's buffers, figures and paramcount
      return {base * un, base * un, base, 0, 0, double(base * es) * nd, (nd - 1) / nd};
    case Collective::broadcast:
    case Collective::reduce:
    case Collective::sendrecv:
      return {count, count, count, 0, 0, double(count * es), 1.0};
  }
  return {};
}

TEST(CollectiveTable, NamesAndFlags) {
  std::set<Collective> ids;
  for (const auto& s : collective_table()) {
    ids.insert(s.id);
    EXPECT_EQ(&collective_spec(s.id), &s);
    EXPECT_EQ(std::string(s.nccl_tests), std::string(s.name) + "_perf");
    ASSERT_TRUE(parse_collective(s.name).has_value());
    EXPECT_EQ(*parse_collective(s.name), s.id);
    const bool reduces =
        s.id == Collective::all_reduce || s.id == Collective::reduce_scatter || s.id == Collective::reduce;
    EXPECT_EQ(s.reduces, reduces) << s.name;
    EXPECT_EQ(s.rooted, s.id == Collective::broadcast || s.id == Collective::reduce) << s.name;
    EXPECT_EQ(s.in_place, s.id != Collective::alltoall && s.id != Collective::alltoallv) << s.name;
  }
  EXPECT_EQ(ids.size(), 8u);
  EXPECT_FALSE(parse_collective("allreduce").has_value());
  EXPECT_FALSE(parse_collective("").has_value());
  for (const char* op : {"sum", "prod", "min", "max", "avg"}) {
    ASSERT_TRUE(parse_redop(op).has_value()) << op;
    EXPECT_EQ(redop_name(*parse_redop(op)), op);
  }
  EXPECT_EQ(*parse_redop("max"), RedOp::max);
  EXPECT_FALSE(parse_redop("mean").has_value());
}

TEST(CollectiveTable, CountsSizesAndBandwidthMatchNcclTests) {
  std::mt19937_64 rng(59);
  std::vector<u64> sizes = {0, 1, 7, 8, 15, 16, 17, 255, 1024, 4096, 65536, 1u << 20, (1u << 20) + 24, 1ull << 33};
  for (int i = 0; i < 40; ++i) sizes.push_back(rng() % (u64{1} << (1 + rng() % 36)));
  for (const auto& spec : collective_table()) {
    for (int n = 1; n <= 9; ++n) {
      for (u64 es : {1u, 2u, 4u, 8u}) {
        for (u64 bytes : sizes) {
          SCOPED_TRACE(testing::Message() << spec.name << " n=" << n << " es=" << es << " bytes=" << bytes);
          const auto want = nccl_model(spec.id, bytes, es, n);
          const auto c = collective_counts(spec, bytes, es, n);
          ASSERT_EQ(c.send, want.send);
          ASSERT_EQ(c.recv, want.recv);
          ASSERT_EQ(c.param, want.param);
          ASSERT_EQ(c.send_inplace_offset, want.send_off);
          ASSERT_EQ(c.recv_inplace_offset, want.recv_off);
          ASSERT_EQ(collective_size_bytes(c, es), std::max(want.send, want.recv) * es);
          ASSERT_LE(collective_size_bytes(c, es), bytes);  // rounding never asks for more than requested
          if (spec.id == Collective::all_gather || spec.id == Collective::reduce_scatter ||
              spec.id == Collective::alltoall || spec.id == Collective::alltoallv) {
            ASSERT_EQ(c.param * es % 16, 0u);
          }
          ASSERT_DOUBLE_EQ(spec.algbw_bytes(c, es, n), want.algbw_bytes);
          ASSERT_DOUBLE_EQ(spec.bus_factor(n), want.factor);
          const double seconds = 1e-6 * static_cast<double>(1 + rng() % 100000);
          const auto bw = collective_bandwidth(spec, c, es, n, seconds);
          ASSERT_DOUBLE_EQ(bw.algbw, want.algbw_bytes / 1e9 / seconds);
          ASSERT_DOUBLE_EQ(bw.busbw, bw.algbw * want.factor);
        }
      }
    }
  }
}

TEST(CollectiveTable, BusFactors) {
  const auto& ar = collective_spec(Collective::all_reduce);
  EXPECT_DOUBLE_EQ(ar.bus_factor(1), 0.0);
  EXPECT_DOUBLE_EQ(ar.bus_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(ar.bus_factor(8), 1.75);
  EXPECT_DOUBLE_EQ(collective_spec(Collective::all_gather).bus_factor(4), 0.75);
  EXPECT_DOUBLE_EQ(collective_spec(Collective::reduce_scatter).bus_factor(8), 0.875);
  EXPECT_DOUBLE_EQ(collective_spec(Collective::alltoall).bus_factor(2), 0.5);
  for (Collective c : {Collective::broadcast, Collective::reduce, Collective::sendrecv})
    for (int n = 1; n <= 16; ++n) EXPECT_EQ(collective_spec(c).bus_factor(n), 1.0);
}

TEST(CollectiveTable, WorkedExamples) {
  // all_reduce of 1 GiB of fp32 on 8 ranks in 10 ms: nccl-tests prints algbw 107.37, busbw 187.90.
  const auto& ar = collective_spec(Collective::all_reduce);
  const auto c = collective_counts(ar, 1ull << 30, 4, 8);
  EXPECT_EQ(c.param, 1ull << 28);
  EXPECT_EQ(collective_size_bytes(c, 4), 1ull << 30);
  const auto bw = collective_bandwidth(ar, c, 4, 8, 0.010);
  EXPECT_NEAR(bw.algbw, 107.374, 0.001);
  EXPECT_NEAR(bw.busbw, 187.905, 0.001);

  // all_gather of 1 GiB (the whole receive buffer) of fp32 on 8 ranks in 10 ms.
  const auto& ag = collective_spec(Collective::all_gather);
  const auto g = collective_counts(ag, 1ull << 30, 4, 8);
  EXPECT_EQ(g.param, 1ull << 25);
  EXPECT_EQ(g.recv, 1ull << 28);
  const auto gbw = collective_bandwidth(ag, g, 4, 8, 0.010);
  EXPECT_NEAR(gbw.algbw, 107.374, 0.001);
  EXPECT_NEAR(gbw.busbw, 93.952, 0.001);

  // reduce_scatter of 1000 bytes of fp64 on 3 ranks: 125 elements, 41 per rank, rounded to 40.
  const auto rs = collective_counts(collective_spec(Collective::reduce_scatter), 1000, 8, 3);
  EXPECT_EQ(rs.param, 40u);
  EXPECT_EQ(rs.send, 120u);
  EXPECT_EQ(rs.recv, 40u);
  EXPECT_EQ(collective_size_bytes(rs, 8), 960u);

  // int8 alltoall on 5 ranks, 1000 bytes: 200 per rank, rounded down to 192.
  const auto a2a = collective_counts(collective_spec(Collective::alltoall), 1000, 1, 5);
  EXPECT_EQ(a2a.param, 192u);
  EXPECT_EQ(a2a.send, 960u);
}

// nccl-tests' alltoallv_perf GetBw: max(largest send, largest receive) bytes / time, x (n-1)/n.
TEST(CollectiveTable, AlltoallvAtUniformCountsIsAlltoall) {
  std::mt19937_64 rng(83);
  const auto& a2a = collective_spec(Collective::alltoall);
  const auto& a2av = collective_spec(Collective::alltoallv);
  for (int i = 0; i < 2000; ++i) {
    const int n = 1 + static_cast<int>(rng() % 64);
    const u64 es = u64{1} << (rng() % 4), bytes = rng() % (u64{1} << (1 + rng() % 34));
    const double seconds = 1e-6 * static_cast<double>(1 + rng() % 100000);
    const auto c = collective_counts(a2a, bytes, es, n), v = collective_counts(a2av, bytes, es, n, AlltoallvSkew{});
    ASSERT_EQ(v.send, c.send);
    ASSERT_EQ(v.recv, c.recv);
    ASSERT_EQ(collective_size_bytes(v, es), collective_size_bytes(c, es));
    const auto bc = collective_bandwidth(a2a, c, es, n, seconds), bv = collective_bandwidth(a2av, v, es, n, seconds);
    ASSERT_EQ(bv.algbw, bc.algbw);
    ASSERT_EQ(bv.busbw, bc.busbw);
    for (int r = 0; r < n; ++r) {  // each rank's block: alltoall's
      const auto b = alltoallv_block(v, es, r, n);
      ASSERT_EQ(b.per, c.param);
      ASSERT_EQ(b.offset, c.param * static_cast<u64>(r));
    }
  }
}

// Zipf: peer d's share (d+1)^-s / H of every sender's data, each rounded down to 16 bytes; the busiest
// rank is the hottest receiver, rank 0, with n c(0).
TEST(CollectiveTable, AlltoallvZipfCountsAndBandwidth) {
  const auto& spec = collective_spec(Collective::alltoallv);
  // 1 MiB of fp32 over 4 ranks at s = 1: H = 1 + 1/2 + 1/3 + 1/4 = 25/12; 262144 elements x 12/25 =
  // 125829.12 -> 125828 (a multiple of 4), /2 62914.56 -> 62912, /3 41943.04 -> 41940, /4 31457.28 -> 31456.
  const auto c = collective_counts(spec, 1u << 20, 4, 4, AlltoallvSkew{1.0, {}});
  EXPECT_EQ(c.param, 65536u);  // nccl-tests' paramcount: the uniform per-peer count
  EXPECT_EQ(c.send, 125828u + 62912u + 41940u + 31456u);
  EXPECT_EQ(c.recv, 4u * 125828u);
  EXPECT_EQ(collective_size_bytes(c, 4), 4u * 125828u * 4u);
  const auto bw = collective_bandwidth(spec, c, 4, 4, 0.001);
  EXPECT_DOUBLE_EQ(bw.algbw, 4.0 * 125828 * 4 / 1e9 / 0.001);
  EXPECT_DOUBLE_EQ(bw.busbw, bw.algbw * 0.75);
  const u64 want_offsets[] = {0, 125828, 125828 + 62912, 125828 + 62912 + 41940};
  const u64 want_per[] = {125828, 62912, 41940, 31456};
  for (int r = 0; r < 4; ++r) {
    const auto b = alltoallv_block(c, 4, r, 4);
    EXPECT_EQ(b.per, want_per[r]);
    EXPECT_EQ(b.offset, want_offsets[r]);
    const auto l = alltoallv_layout(c, 4, r, 4);
    for (int p = 0; p < 4; ++p) {
      EXPECT_EQ(l.send_counts[static_cast<std::size_t>(p)], want_per[p]);
      EXPECT_EQ(l.send_displs[static_cast<std::size_t>(p)], want_offsets[p]);
      EXPECT_EQ(l.recv_counts[static_cast<std::size_t>(p)], want_per[r]);
      EXPECT_EQ(l.recv_displs[static_cast<std::size_t>(p)], want_per[r] * static_cast<u64>(p));
    }
  }
  // A steeper skew loads rank 0 more: more bytes behind algbw for the same request.
  const AlltoallvSkew uniform, zipf12{1.2, {}}, zipf2{2.0, {}};
  EXPECT_GT(collective_counts(spec, 1u << 20, 4, 8, zipf2).recv, collective_counts(spec, 1u << 20, 4, 8, zipf12).recv);
  EXPECT_GT(collective_counts(spec, 1u << 20, 4, 8, zipf12).recv, collective_counts(spec, 1u << 20, 4, 8, uniform).recv);
}

TEST(CollectiveTable, AlltoallvSkewText) {
  std::string why;
  EXPECT_EQ(parse_alltoallv_skew("uniform", why), AlltoallvSkew{});
  EXPECT_EQ(parse_alltoallv_skew("zipf:1.2", why), (AlltoallvSkew{1.2, {}}));
  EXPECT_EQ(parse_alltoallv_skew("weights:4 1,0 1.5", why), (AlltoallvSkew{0, {4, 1, 0, 1.5}}));
  EXPECT_EQ(alltoallv_skew_text({}), "uniform");
  EXPECT_EQ(alltoallv_skew_text({1.2, {}}), "zipf:1.2");
  EXPECT_EQ(alltoallv_skew_text({0, {4, 1, 0, 1.5}}), "weights:4 1 0 1.5");
  for (const char* bad : {"", "zipf", "zipf:", "zipf:0", "zipf:-1", "zipf:11", "zipf:1.2x", "zipf:nan", "Zipf:1",
                          "weights:", "weights:3", "weights:0 0", "weights:1 -1", "weights:1 nan", "weights:1 inf",
                          "weights:1 2x", "weights:1;2"}) {
    why.clear();
    EXPECT_FALSE(parse_alltoallv_skew(bad, why).has_value()) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

// A skew file: one row of weights, one per receiving rank. Here 4 1 1 1 over 4 ranks of fp32: each
// sender's 4 x 64 = 256 elements split 256 x 4/7 = 146.3 -> 144 (a multiple of 4 elements, 16 bytes),
// 36.6 -> 36 for the others; rank 0 receives 4 x 144, the busiest.
TEST(CollectiveTable, AlltoallvWeightsFromAFile) {
  std::string why;
  const auto skew = parse_alltoallv_skew_file("# expert load of step 1200\n\n4, 1, 1, 1   # hot expert 0\n", why);
  ASSERT_TRUE(skew) << why;
  EXPECT_EQ(skew->weights, (std::vector<double>{4, 1, 1, 1}));
  const auto& spec = collective_spec(Collective::alltoallv);
  const auto c = collective_counts(spec, 256 * 4, 4, 4, *skew);
  EXPECT_EQ(c.param, 64u);
  EXPECT_EQ(c.send, 144u + 3 * 36u);
  EXPECT_EQ(c.recv, 4 * 144u);
  const auto b = alltoallv_block(c, 4, 2, 4);
  EXPECT_EQ(b.per, 36u);
  EXPECT_EQ(b.offset, 144u + 36u);
  EXPECT_FALSE(alltoallv_skew_refusal(*skew, 4));
  const auto refused = alltoallv_skew_refusal(*skew, 8);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("for 4 ranks, this group has 8"), std::string::npos) << *refused;
  EXPECT_THROW(alltoallv_peer_counts(1024, *skew, 4, 8), std::invalid_argument);
  for (const char* bad : {"", "# nothing\n", "1 2\n3 4\n", "1 x 2", "0 0 0", "5"}) {
    why.clear();
    EXPECT_FALSE(parse_alltoallv_skew_file(bad, why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
  why.clear();
  parse_alltoallv_skew_file("1 2\n2 1\n", why);
  EXPECT_NE(why.find("2 rows"), std::string::npos) << why;
}

TEST(CollectiveTable, NoBandwidthWithoutTime) {
  const auto& ar = collective_spec(Collective::all_reduce);
  const auto c = collective_counts(ar, 1 << 20, 4, 4);
  for (double s : {0.0, -1.0, std::nan("")}) {
    const auto bw = collective_bandwidth(ar, c, 4, 4, s);
    EXPECT_EQ(bw.algbw, 0.0);
    EXPECT_EQ(bw.busbw, 0.0);
  }
}

}  // namespace
}  // namespace gpuscale
