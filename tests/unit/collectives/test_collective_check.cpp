// collectives/collective_check: the expected value of every received element, against a simulation of
// each collective over explicit send buffers with the dtype's arithmetic (integers wrap, floats round
// after every step), for every op, dtype and 1..16 ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "test_seed.h"
#include "collectives/collective_check.h"
#include "collectives/collective_table.h"
#include "core/element_codec.h"

namespace gpuscale {
namespace {

using u64 = std::uint64_t;

const DType kTypes[] = {DType::fp32, DType::fp64, DType::fp16, DType::bf16, DType::int32, DType::int8};
const RedOp kOps[] = {RedOp::sum, RedOp::prod, RedOp::min, RedOp::max, RedOp::avg};

// One arithmetic result stored in the dtype.
double in_type(DType t, double v) {
  switch (t) {
    case DType::fp32:
      return static_cast<float>(v);
    case DType::fp16:
      return fp16_bits_to_float(float_to_fp16_bits(static_cast<float>(v)));
    case DType::bf16:
      return bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(v)));
    case DType::int32:
      return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::int64_t>(v)));
    case DType::int8:
      return static_cast<std::int8_t>(static_cast<std::uint8_t>(static_cast<std::int64_t>(v)));
    default:
      return v;
  }
}

// Reduces one element across ranks as the dtype would, tracking the exact value alongside.
struct Reduced {
  double in_dtype = 0;  // what a collective computing in the dtype produces (avg: before the division)
  double exact = 0;     // the mathematically exact reduction
  double largest = 0;   // largest |exact partial result|
};

Reduced reduce(DType t, RedOp op, const std::vector<double>& v) {
  Reduced r{v[0], v[0], std::fabs(v[0])};
  for (std::size_t j = 1; j < v.size(); ++j) {
    switch (op) {
      case RedOp::sum:
      case RedOp::avg:
        r.in_dtype = in_type(t, r.in_dtype + v[j]);
        r.exact += v[j];
        break;
      case RedOp::prod:
        r.in_dtype = in_type(t, r.in_dtype * v[j]);
        r.exact *= v[j];
        break;
      case RedOp::min:
        r.in_dtype = std::min(r.in_dtype, v[j]);
        r.exact = std::min(r.exact, v[j]);
        break;
      case RedOp::max:
        r.in_dtype = std::max(r.in_dtype, v[j]);
        r.exact = std::max(r.exact, v[j]);
        break;
    }
    r.largest = std::max(r.largest, std::fabs(r.exact));
  }
  return r;
}

struct Sim {
  CollCheckCase c;
  std::vector<std::vector<double>> send;  // per rank, counts.send elements

  double in(int rank, u64 i) const { return send[static_cast<std::size_t>(rank)][i]; }

  // What rank `r` receives (reduce_scatter: its block; reduce: the root's buffer, nothing elsewhere).
  std::vector<double> result(int r) const {
    const u64 per = c.counts.param, count = c.counts.recv;
    const int n = c.nranks;
    std::vector<double> out;
    auto reduced = [&](u64 i) {
      std::vector<double> v;
      for (int j = 0; j < n; ++j) v.push_back(in(j, i));
      const auto red = reduce(c.dtype, c.op, v);
      // Representable: every partial result is an integer within the dtype's exact range, so the
      // dtype's arithmetic gives the exact value (integer types never wrap at these rank counts).
      EXPECT_LE(red.largest, dtype_exact_integer_limit(c.dtype));
      EXPECT_EQ(red.in_dtype, red.exact);
      if (c.op != RedOp::avg) return red.in_dtype;
      if (dtype_is_float(c.dtype)) return red.exact / n;
      return std::trunc(red.in_dtype / n);  // integer avg: sum in the type, then divide toward zero
    };
    switch (c.coll) {
      case Collective::all_reduce:
        for (u64 i = 0; i < count; ++i) out.push_back(reduced(i));
        break;
      case Collective::reduce:
        if (r == c.root)
          for (u64 i = 0; i < count; ++i) out.push_back(reduced(i));
        break;
      case Collective::reduce_scatter:
        for (u64 i = 0; i < per; ++i) out.push_back(reduced(static_cast<u64>(r) * per + i));
        break;
      case Collective::broadcast:
        out = send[static_cast<std::size_t>(c.root)];
        break;
      case Collective::all_gather:
        for (int j = 0; j < n; ++j)
          for (u64 i = 0; i < per; ++i) out.push_back(in(j, i));
        break;
      case Collective::alltoall:
        for (int j = 0; j < n; ++j)
          for (u64 i = 0; i < per; ++i) out.push_back(in(j, static_cast<u64>(r) * per + i));
        break;
      case Collective::sendrecv:
        out = send[static_cast<std::size_t>((r + n - 1) % n)];
        break;
      case Collective::alltoallv: {
        // Every sender's buffer is its peers' blocks in peer order, of the sizes its skew gives.
        const auto c_of = peer_counts(c.counts.param * static_cast<u64>(n), c.counts.skew, dtype_size(c.dtype), n);
        u64 at = 0;
        for (int d = 0; d < r; ++d) at += c_of[static_cast<std::size_t>(d)];
        for (int j = 0; j < n; ++j)
          for (u64 i = 0; i < c_of[static_cast<std::size_t>(r)]; ++i) out.push_back(in(j, at + i));
        break;
      }
    }
    return out;
  }

  // alltoallv's per-peer counts, written out here from the rule (collectives/alltoallv_plan.h).
  static std::vector<u64> peer_counts(u64 count, const AlltoallvSkew& skew, u64 es, int n) {
    const u64 grain = es >= 16 ? 1 : 16 / es;
    const double s = skew.zipf;
    auto weight = [&](int d) { return skew.weights.empty() ? std::pow(d, -s) : skew.weights[static_cast<std::size_t>(d - 1)]; };
    const bool uniform = s == 0 && skew.weights.empty();
    double h = 0;
    for (int d = 1; d <= n; ++d) h += uniform ? 1.0 : weight(d);
    std::vector<u64> c;
    for (int d = 1; d <= n; ++d) {
      const double share = uniform ? double(count / static_cast<u64>(n)) : double(count) * weight(d) / h;
      c.push_back(static_cast<u64>(share) / grain * grain);
    }
    return c;
  }
};

Sim make_sim(Collective coll, DType t, RedOp op, int n, int root, u64 seed, const AlltoallvSkew& skew = {}) {
  const auto& spec = collective_spec(coll);
  const u64 es = dtype_size(t);
  Sim s{{coll, t, op, n, root, collective_counts(spec, static_cast<u64>(n) * 32 * es, es, n, skew), seed}, {}};
  const auto range = collective_input_range(t, op, n);
  for (int r = 0; r < n; ++r) {
    std::vector<double> buf;
    for (u64 i = 0; i < s.c.counts.send; ++i)
      buf.push_back(collective_input(seed, op, range, r, i, n, collective_contributors(t, op, n)));
    s.send.push_back(std::move(buf));
  }
  return s;
}

TEST(CollectiveCheck, ExpectedValuesMatchASimulationForEveryCase) {
  std::mt19937_64 rng(61);
  for (const auto& spec : collective_table()) {
    for (DType t : kTypes) {
      for (RedOp op : kOps) {
        if (!spec.reduces && op != RedOp::sum) continue;  // data movement: the op plays no part
        for (int n = 1; n <= 16; ++n) {
          std::vector<AlltoallvSkew> skews = {AlltoallvSkew{}};
          if (spec.id == Collective::alltoallv && n > 1) {
            skews = {{}, {0.7, {}}, {1.2, {}}, {3, {}}, {0, {}}};
            for (int d = 0; d < n; ++d) skews.back().weights.push_back(static_cast<double>(rng() % 4));  // zeros too
            skews.back().weights[static_cast<std::size_t>(rng() % static_cast<u64>(n))] += 1;  // never all zero
          }
          for (const auto& skew : skews) {
            const int root = spec.rooted ? static_cast<int>(rng() % static_cast<u64>(n)) : 0;
            const auto sim = make_sim(spec.id, t, op, n, root, rng() >> 11, skew);
            SCOPED_TRACE(testing::Message() << spec.name << " " << dtype_name(t) << " " << redop_name(op) << " n=" << n
                                            << " root=" << root << " skew=" << alltoallv_skew_text(skew));
            for (int r = 0; r < n; ++r) {
              const auto want = sim.result(r);
              ASSERT_EQ(collective_result_count(sim.c, r), want.size()) << "rank " << r;
              for (u64 i = 0; i < want.size(); ++i) {
                const double e = collective_expected(sim.c, r, i);
                ASSERT_EQ(e, want[i]) << "rank " << r << " index " << i;
                auto ok = [&](double got) { return collective_value_ok(sim.c, r, i, got); };
                ASSERT_TRUE(ok(e));
                const double stored = in_type(t, e);  // what a correct collective leaves in the buffer
                ASSERT_TRUE(ok(stored)) << stored << " vs " << e;
                if (op != RedOp::avg || !dtype_is_float(t)) {
                  ASSERT_FALSE(ok(e + 1));
                  ASSERT_FALSE(ok(std::nextafter(e, 1e300))) << "not exact";
                } else {
                  const double tol = coll_expected(collective_check_plan(sim.c, r), i).tolerance;
                  ASSERT_GT(tol, 0);
                  ASSERT_FALSE(ok(e + 2 * tol + std::fabs(e) * dtype_epsilon(t))) << "avg beyond its bound";
                  ASSERT_FALSE(ok(std::nan("")));
                }
              }
            }
          }
        }
      }
    }
  }
}

// NCCL's float avg (PreMulSum): every input times 1/n rounded to the type, products and sums rounded
// to the type, in the order the algorithm happens to use. The symmetric kernels sum in float first and
// scale after. Every such result must pass, also with cancellation and n not a power of two, where a
// tolerance relative to |expected| (the old 2 ulp) rejects correct results.
double premulsum(DType t, const std::vector<double>& x, const std::vector<std::size_t>& order) {
  const double s = in_type(t, 1.0 / static_cast<double>(x.size()));
  double acc = 0;
  bool first = true;
  for (std::size_t j : order) {
    const double term = in_type(t, x[j] * s);
    acc = first ? term : in_type(t, acc + term);
    first = false;
  }
  return acc;
}

double sum_then_scale(DType t, const std::vector<double>& x) {
  // 16-bit types accumulate in float there; the others in their own type.
  const bool narrow = t == DType::fp16 || t == DType::bf16;
  const auto acc_type = [&](double v) { return narrow ? static_cast<double>(static_cast<float>(v)) : in_type(t, v); };
  double acc = 0;
  for (double v : x) acc = acc_type(acc + v);
  return in_type(t, acc * acc_type(1.0 / static_cast<double>(x.size())));
}

TEST(CollectiveCheck, FloatAvgAcceptsNcclsRoundingAndNothingFar) {
  std::mt19937_64 rng(7);
  int beyond_two_ulp = 0;
  for (DType t : {DType::fp16, DType::bf16, DType::fp32, DType::fp64}) {
    for (int n : {2, 3, 5, 6, 7, 9, 12, 24}) {
      const CollCheckCase c{Collective::all_reduce, t, RedOp::avg, n, 0, {512, 512, 512, 0, 0, {}}, rng() >> 11};
      const auto plan = collective_check_plan(c, 0);
      std::vector<std::size_t> forward(static_cast<std::size_t>(n)), backward, shuffled;
      for (int j = 0; j < n; ++j) forward[static_cast<std::size_t>(j)] = static_cast<std::size_t>(j);
      backward.assign(forward.rbegin(), forward.rend());
      for (u64 i = 0; i < 512; ++i) {
        std::vector<double> x;
        for (int r = 0; r < n; ++r)
          x.push_back(collective_input(c.seed, RedOp::avg, plan.range, r, i, n, plan.contributors));
        shuffled = forward;
        std::shuffle(shuffled.begin(), shuffled.end(), rng);
        const auto want = coll_expected(plan, i);
        double exact = 0;
        for (double v : x) exact += v;
        ASSERT_EQ(want.value, exact / n);
        for (double got : {premulsum(t, x, forward), premulsum(t, x, backward), premulsum(t, x, shuffled),
                           sum_then_scale(t, x)}) {
          ASSERT_TRUE(coll_value_ok(got, want)) << dtype_name(t) << " n=" << n << " got " << got << " want "
                                                << want.value << " tol " << want.tolerance;
          if (std::fabs(got - want.value) > 2 * 2 * dtype_epsilon(t) * std::fabs(want.value)) ++beyond_two_ulp;
        }
        // The bound stays tight: a few units of the inputs' rounding, far below the inputs themselves.
        double magnitude = 0;
        for (double v : x) magnitude += std::fabs(v);
        EXPECT_LE(want.tolerance, (4.0 * n + 8) * dtype_epsilon(t) * std::max(magnitude / n, 1.0));
        EXPECT_FALSE(coll_value_ok(want.value + 3 * want.tolerance + 1e-300, want));
      }
    }
  }
  EXPECT_GT(beyond_two_ulp, 0) << "the simulation should contain results a 2-ulp rule rejects";
}

TEST(CollectiveCheck, IntegerAvgWrapsThenDividesTowardZero) {
  // NCCL's SumPostDiv: the sum in the type's wrapping arithmetic, then |x| / n with the sign restored.
  for (DType t : {DType::int8, DType::int32}) {
    for (int n : {3, 7, 300}) {
      const CollCheckCase c{Collective::all_reduce, t, RedOp::avg, n, 0, {256, 256, 256, 0, 0, {}}, 99};
      const auto range = collective_input_range(t, RedOp::avg, n);
      int negative = 0;
      for (u64 i = 0; i < 256; ++i) {
        std::int64_t acc = 0;
        for (int r = 0; r < n; ++r) {
          acc += static_cast<std::int64_t>(collective_input(99, RedOp::avg, range, r, i, n, n));
          acc = t == DType::int8 ? static_cast<std::int8_t>(static_cast<std::uint8_t>(acc & 0xff))
                                 : static_cast<std::int32_t>(static_cast<std::uint32_t>(acc & 0xffffffff));
        }
        const std::int64_t q = acc < 0 ? -((-acc) / n) : acc / n;
        negative += acc < 0;
        EXPECT_EQ(collective_expected(c, 0, i), static_cast<double>(q)) << dtype_name(t) << " n=" << n << " i=" << i;
        EXPECT_FALSE(collective_value_ok(c, 0, i, static_cast<double>(q + 1)));
      }
      EXPECT_GT(negative, 0);
    }
  }
}

TEST(CollectiveCheck, InputsAreSmallVariedIntegers) {
  for (DType t : kTypes) {
    for (RedOp op : kOps) {
      for (int n = 1; n <= 16; ++n) {
        const auto range = collective_input_range(t, op, n);
        SCOPED_TRACE(testing::Message() << dtype_name(t) << " " << redop_name(op) << " n=" << n << " range=" << range);
        ASSERT_GE(range, 1);
        if (op == RedOp::prod) {
          EXPECT_EQ(range, 1);
        }
        if (op == RedOp::sum || op == RedOp::avg) {
          // the nonzero terms stay exact
          EXPECT_LE(static_cast<double>(range) * collective_contributors(t, op, n), dtype_exact_integer_limit(t));
        }
        std::set<std::vector<double>> per_rank;
        for (int r = 0; r < n; ++r) {
          std::vector<double> v;
          for (u64 i = 0; i < 64; ++i) {
            v.push_back(collective_input(1234, op, range, r, i, n, collective_contributors(t, op, n)));
            ASSERT_EQ(v.back(), std::round(v.back()));
            ASSERT_LE(std::fabs(v.back()), static_cast<double>(range));
            if (op == RedOp::prod) {
              ASSERT_TRUE(v.back() == 1.0 || v.back() == -1.0);
            }
          }
          EXPECT_GE(std::set<double>(v.begin(), v.end()).size(), 2u) << "rank " << r;
          per_rank.insert(v);
        }
        // Ranks hold different data, so a collective that mixes up ranks is caught.
        EXPECT_EQ(per_rank.size(), static_cast<std::size_t>(n));
      }
    }
  }
  EXPECT_EQ(collective_input_range(DType::fp32, RedOp::sum, 1), 1000);
  EXPECT_EQ(collective_input_range(DType::fp16, RedOp::sum, 3), 682);
  EXPECT_EQ(collective_input_range(DType::bf16, RedOp::sum, 16), 16);
  EXPECT_EQ(collective_input_range(DType::int8, RedOp::sum, 16), 7);
  EXPECT_EQ(collective_input_range(DType::int8, RedOp::max, 16), 100);
}

// A tiny explicit model: 3 ranks, 4 elements per rank block.
class ThreeRanks : public testing::Test {
 protected:
  static constexpr u64 kSeed = 2024;
  std::int64_t range = collective_input_range(DType::fp32, RedOp::sum, 3);
  double in(int rank, u64 i) const { return collective_input(kSeed, RedOp::sum, range, rank, i, 3, 3); }
  CollCheckCase make(Collective c, CollCounts counts, int root = 0) const {
    return {c, DType::fp32, RedOp::sum, 3, root, counts, kSeed};
  }
  // Expects rank `r` to receive in(src[i].first, src[i].second) at index i.
  void expect_sources(const CollCheckCase& c, int r, const std::vector<std::pair<int, u64>>& src) const {
    ASSERT_EQ(collective_result_count(c, r), src.size());
    for (u64 i = 0; i < src.size(); ++i)
      EXPECT_EQ(collective_expected(c, r, i), in(src[i].first, src[i].second)) << "rank " << r << " index " << i;
  }
};

TEST_F(ThreeRanks, AllGather) {
  const auto c = make(Collective::all_gather, {4, 12, 4, 4, 0, {}});
  for (int r = 0; r < 3; ++r)
    expect_sources(c, r,
                   {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 0}, {1, 1}, {1, 2}, {1, 3}, {2, 0}, {2, 1}, {2, 2}, {2, 3}});
}

TEST_F(ThreeRanks, Alltoall) {
  const auto c = make(Collective::alltoall, {12, 12, 4, 0, 0, {}});
  expect_sources(c, 0,
                 {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 0}, {1, 1}, {1, 2}, {1, 3}, {2, 0}, {2, 1}, {2, 2}, {2, 3}});
  expect_sources(c, 1,
                 {{0, 4}, {0, 5}, {0, 6}, {0, 7}, {1, 4}, {1, 5}, {1, 6}, {1, 7}, {2, 4}, {2, 5}, {2, 6}, {2, 7}});
  expect_sources(
      c, 2, {{0, 8}, {0, 9}, {0, 10}, {0, 11}, {1, 8}, {1, 9}, {1, 10}, {1, 11}, {2, 8}, {2, 9}, {2, 10}, {2, 11}});
}

TEST_F(ThreeRanks, SendrecvReceivesFromThePreviousRank) {
  const auto c = make(Collective::sendrecv, {4, 4, 4, 0, 0, {}});
  expect_sources(c, 0, {{2, 0}, {2, 1}, {2, 2}, {2, 3}});
  expect_sources(c, 1, {{0, 0}, {0, 1}, {0, 2}, {0, 3}});
  expect_sources(c, 2, {{1, 0}, {1, 1}, {1, 2}, {1, 3}});
}

TEST_F(ThreeRanks, BroadcastFromTheRoot) {
  const auto c = make(Collective::broadcast, {4, 4, 4, 0, 0, {}}, 2);
  for (int r = 0; r < 3; ++r) expect_sources(c, r, {{2, 0}, {2, 1}, {2, 2}, {2, 3}});
  const auto c1 = make(Collective::broadcast, {4, 4, 4, 0, 0, {}}, 1);
  expect_sources(c1, 0, {{1, 0}, {1, 1}, {1, 2}, {1, 3}});
}

TEST_F(ThreeRanks, ReduceScatterTakesTheRanksBlock) {
  const auto c = make(Collective::reduce_scatter, {12, 4, 4, 0, 4, {}});
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(collective_result_count(c, r), 4u);
    for (u64 i = 0; i < 4; ++i) {
      const u64 g = static_cast<u64>(r) * 4 + i;
      EXPECT_EQ(collective_expected(c, r, i), in(0, g) + in(1, g) + in(2, g)) << r << " " << i;
    }
  }
}

TEST_F(ThreeRanks, ReduceOnlyTheRootChecks) {
  const auto c = make(Collective::reduce, {12, 12, 12, 0, 0, {}}, 1);
  EXPECT_EQ(collective_result_count(c, 0), 0u);
  EXPECT_EQ(collective_result_count(c, 2), 0u);
  ASSERT_EQ(collective_result_count(c, 1), 12u);
  for (u64 i = 0; i < 12; ++i) EXPECT_EQ(collective_expected(c, 1, i), in(0, i) + in(1, i) + in(2, i));
  const auto ar = make(Collective::all_reduce, {12, 12, 12, 0, 0, {}});
  for (int r = 0; r < 3; ++r)
    for (u64 i = 0; i < 12; ++i) EXPECT_EQ(collective_expected(ar, r, i), in(0, i) + in(1, i) + in(2, i));
}

TEST_F(ThreeRanks, OnlyTheBroadcastRootFillsInputs) {
  const auto b = make(Collective::broadcast, {4, 4, 4, 0, 0, {}}, 1);
  EXPECT_EQ(collective_input_count(b, 0), 0u);
  EXPECT_EQ(collective_input_count(b, 1), 4u);
  EXPECT_EQ(collective_input_count(b, 2), 0u);
  // Every other collective reads every rank's send buffer (root 1 too: reduce has one).
  for (const auto& spec : collective_table()) {
    if (spec.id == Collective::broadcast) continue;
    const auto c = make(spec.id, {12, 7, 4, 0, 0, {}}, 1);
    for (int r = 0; r < 3; ++r) EXPECT_EQ(collective_input_count(c, r), 12u) << spec.name << " rank " << r;
  }
}

TEST(CollectiveCheck, SmallChecksLookAtEveryElement) {
  const CollCheckCase c{Collective::all_reduce, DType::fp32, RedOp::sum, 8, 0, {1u << 20, 1u << 20, 1u << 20, 0, 0, {}}, 5};
  const auto plan = collective_check_plan(c, 0);
  EXPECT_EQ(plan.every, 1u);
  EXPECT_EQ(collective_checked_count(c, 0), 1u << 20);
  EXPECT_DOUBLE_EQ(collective_check_evaluations(c, 0), 8.0 * (1u << 20));
  for (u64 i : {u64{0}, u64{12345}, (u64{1} << 20) - 1}) EXPECT_TRUE(coll_sampled(plan, i));
}

TEST(CollectiveCheck, LargeReductionsAtManyRanksCheckBlocksWithinTheBudget) {
  std::mt19937_64 rng(test_seed());
  // A reduction's element costs one input per rank: 4096 ranks x 2^20 elements (2^32 inputs) is over the
  // budget, so blocks are sampled; the first and the last (a partial tail) always.
  const u64 count = (u64{1} << 20) + 1 + rng() % 100000;
  for (Collective coll : {Collective::all_reduce, Collective::reduce_scatter}) {
    const CollCheckCase c{coll, DType::fp32, RedOp::sum, 4096, 0, {count, count, count, 0, 0, {}}, rng()};
    const auto plan = collective_check_plan(c, 0);
    ASSERT_GE(plan.every, 2u);
    u64 seen = 0;
    for (u64 i = 0; i < count; ++i) seen += coll_sampled(plan, i);
    EXPECT_EQ(seen, collective_checked_count(c, 0));
    EXPECT_TRUE(coll_sampled(plan, 0));
    EXPECT_TRUE(coll_sampled(plan, count - 1));
    EXPECT_LE(collective_check_evaluations(c, 0), double(kCollCheckBudget + 2 * kCollCheckBlock * 4096));
    EXPECT_GE(collective_check_evaluations(c, 0), double(kCollCheckBudget) / 4) << "sampled far below the budget";
    // A wrong element between the sampled blocks is not seen: that is the price, stated in docs.
    bool skipped = false;
    for (u64 i = 0; i < count && !skipped; i += kCollCheckBlock) skipped = !coll_sampled(plan, i);
    EXPECT_TRUE(skipped);
  }
  // Data movement costs one input per element: 2^28 received elements over 4096 ranks are checked whole,
  // where a reduction of them would be sampled.
  const u64 per = u64{1} << 16;
  const CollCheckCase g{Collective::all_gather, DType::fp32, RedOp::sum, 4096, 0, {per, per * 4096, per, 0, 0, {}}, 1};
  EXPECT_EQ(collective_check_plan(g, 0).every, 1u);
  EXPECT_EQ(collective_checked_count(g, 0), per * 4096);
  const CollCheckCase r{Collective::all_reduce, DType::fp32, RedOp::sum, 4096, 0, {per * 4096, per * 4096, per * 4096, 0, 0, {}}, 1};
  EXPECT_GE(collective_check_plan(r, 0).every, 2u);
}

TEST(CollectiveCheck, ManyRankInt8SumsFollowInt8Arithmetic) {
  // More int8 ranks than the input range can keep exact (range 1): expected values are int8 sums.
  CollCheckCase c{Collective::all_reduce, DType::int8, RedOp::sum, 300, 0, {64, 64, 64, 0, 0, {}}, 5};
  const auto range = collective_input_range(DType::int8, RedOp::sum, 300);
  EXPECT_EQ(range, 1);
  for (u64 i = 0; i < 64; ++i) {
    std::int8_t acc = 0;
    for (int r = 0; r < 300; ++r)
      acc = static_cast<std::int8_t>(
          static_cast<std::uint8_t>(acc + static_cast<int>(collective_input(5, RedOp::sum, range, r, i, 300, 300))));
    EXPECT_EQ(collective_expected(c, 0, i), acc);
  }
}

// At any rank count (2..16384) float sums stay exact and the average's bound stays well below the
// inputs (fp16 and wider): the nonzero terms of each element never leave the type's exact integers. Before, the slack
// of a float sum exceeded the values themselves at >= 16 ranks for fp8_e5m2, 32 for e4m3, 512 for bf16.
TEST(CollectiveCheck, FloatBoundsStayTightAtAnyRankCount) {
  std::vector<int> counts;
  for (int n = 2; n <= 16384; n *= 2)
    for (int d : {-1, 0, 1}) counts.push_back(std::clamp(n + d, 2, 16384));
  std::mt19937 rng(13);
  for (int j = 0; j < 20; ++j) counts.push_back(2 + static_cast<int>(rng() % 16383));
  for (DType t : {DType::fp64, DType::fp32, DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2}) {
    const double limit = dtype_exact_integer_limit(t);
    for (RedOp op : {RedOp::sum, RedOp::avg}) {
      for (int n : counts) {
        SCOPED_TRACE(testing::Message() << dtype_name(t) << " " << redop_name(op) << " n=" << n);
        const CollCheckCase c{Collective::all_reduce, t, op, n, 0, {16, 16, 16, 0, 0, {}}, 0x5eedULL + static_cast<u64>(n)};
        const auto plan = collective_check_plan(c, 0);
        ASSERT_GE(plan.contributors, 1);
        ASSERT_LE(plan.contributors, n);
        ASSERT_GE(plan.range, 1);
        // Every partial sum of the nonzero terms is an integer within the exact range, in any order.
        ASSERT_LE(static_cast<double>(plan.range) * plan.contributors, limit);
        std::set<double> seen;
        for (u64 i = 0; i < 16; ++i) {
          const auto want = coll_expected(plan, i);
          double magnitude = 0, exact = 0;
          int nonzero_ranks = 0;
          for (int r = 0; r < n; ++r) {
            const double v = collective_input(c.seed, op, plan.range, r, i, n, plan.contributors);
            seen.insert(v);
            magnitude += std::fabs(v);
            exact += v;
            nonzero_ranks += v != 0;
          }
          ASSERT_LE(nonzero_ranks, plan.contributors);
          if (op == RedOp::sum) {
            EXPECT_EQ(want.tolerance, 0.0);  // exact: any difference is a wrong value
            EXPECT_EQ(want.value, exact);
            EXPECT_LE(std::fabs(want.value), limit);
          } else {
            EXPECT_EQ(want.value, exact / n);
            // The bound is below half the inputs' mean magnitude (it was a multiple of it). Not for fp8:
            // the mean of many ranks' inputs falls below its resolution (e4m3's smallest subnormal is
            // 2^-9), so no choice of inputs makes its average precise.
            const bool fp8 = t == DType::fp8_e4m3 || t == DType::fp8_e5m2;
            if (magnitude > 0 && !fp8) {
              EXPECT_LT(want.tolerance, 0.5 * magnitude / n) << "i=" << i;
            }
          }
        }
        EXPECT_GE(seen.size(), 3u) << "inputs must vary, never constant";
      }
    }
  }
}

}  // namespace
}  // namespace gpuscale
