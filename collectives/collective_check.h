#pragma once
// Exact correctness checks for collectives (nccl-tests' -c, with random inputs). Every rank's input is
// a function of (seed, rank, index), so any rank can compute what it must receive without talking to
// the others. Inputs are small random integers whose range depends on the dtype, the op and the rank
// count, chosen so that every sum, product, min and max is exactly representable: any difference is a
// wrong value, not rounding.
//
// Two reductions round by design, and their tolerance follows how NCCL computes them:
//  - float avg: NCCL multiplies every input by 1/n rounded to the type, then sums (PreMulSum; its
//    symmetric kernels sum first, then scale). With cancellation the result can be far from |expected|
//    in ulps, so the bound is on the inputs' magnitudes: with u the unit roundoff, A = sum_r |x_r|,
//    e_s = max(u/n, s_min/2) the error of the rounded scalar (s_min: the smallest subnormal) and
//    g(k) = k u / (1 - k u):  |got - sum_r x_r / n| <= A e_s + A (1/n + e_s) g(n+1) + (n+1) s_min.
//    Any summation order is covered: each input meets at most n-1 additions, one product, one scalar.
//    Only the nonzero inputs count (a product or a sum with 0 is exact), so k is contributors + 1.
//  - float sums stay exact at any rank count: over more ranks than the type keeps exact, only a random
//    window of ranks gives nonzero inputs at each element (collective_contributors).
// Integer avg is exact: NCCL sums in the type (wrapping) and then divides toward zero (SumPostDiv).
//
// The core is plain data and inline functions (GPUSCALE_HD) so the CUDA backend checks on the device
// with the very code the host uses. What each collective's result must hold (coll_expected), and
// which of its elements a rank checks, are in that collective's block of collectives/collective_table.h.
#include <cstdint>

#include "collectives/collective_types.h"
#include "core/dtype.h"
#include "core/random.h"

namespace gpuscale {

struct CollCheckCase {
  Collective coll;
  DType dtype;
  RedOp op;
  int nranks;
  int root;
  CollCounts counts;
  std::uint64_t seed;
};

// How many ranks give a nonzero input at each element. Float sums and averages over more ranks than
// the type keeps exact take a random window of this many ranks per element (the others give 0, and
// adding 0 is exact): the sum then stays an exact integer of the type at any rank count (16384 and
// beyond), and the average's rounding bound counts only these terms. Everything else: every rank.
int collective_contributors(DType dtype, RedOp op, int nranks);

// Inputs are integers in [-range, range] (prod uses -1 and 1 only); range * contributors stays within
// the type's exact integers for float sums.
std::int64_t collective_input_range(DType dtype, RedOp op, int nranks);

// Value of element `index` of rank `rank`'s send buffer, in a group of `nranks` of which
// `contributors` (collective_contributors) give a nonzero value at each element: a window starting at a
// random rank per element, wrapping around.
GPUSCALE_HD inline double collective_input(std::uint64_t seed, RedOp op, std::int64_t range, int rank,
                                           std::uint64_t index, int nranks, int contributors) {
  const std::uint64_t stream = 0x636f6c6cULL + static_cast<std::uint64_t>(rank);
  if (op == RedOp::prod) return random_int(seed, stream, index, 0, 1) ? 1.0 : -1.0;
  if (contributors < nranks) {
    const auto first = random_int(seed, 0x77696e64ULL, index, 0, nranks - 1);  // same on every rank
    if ((rank - first + nranks) % nranks >= contributors) return 0.0;
  }
  return static_cast<double>(random_int(seed, stream, index, -range, range));
}

// Everything one rank's check needs, as plain data (copied to the device as a kernel argument).
struct CollCheckPlan {
  Collective coll;
  RedOp op;
  int nranks;
  int root;
  int rank;
  std::uint64_t per;   // the per-rank block of all_gather, reduce_scatter, alltoall(v) (CollBlock)
  std::uint64_t offset;  // alltoallv: where this rank's block starts in every sender's buffer
  std::uint64_t seed;
  std::int64_t range;  // collective_input_range
  int contributors;    // collective_contributors
  int int_bits;        // 8 or 32: integer arithmetic wraps at this width; 0 for float types
  double unit_roundoff;  // float types: dtype_epsilon
  double min_subnormal;  // float types: dtype_min_subnormal
  // Which result elements are checked (coll_sampled): every `every`-th block of `block` elements, with
  // the first and the last block always; every = 1 checks them all. `count`: the result's elements.
  std::uint64_t block, every, count;
};

// The check's cost is bounded. A reduced element costs one input per rank (coll_reduce): O(ranks) per
// element, so at 128+ ranks and GiB messages a full check would cost far more than the collective.
// Above kCollCheckBudget input evaluations per check, a rank checks evenly spaced blocks of
// kCollCheckBlock elements, the first and last block always (a fault at the start or in the tail is
// never skipped), as the GEMM check samples entries. The demand counts the evaluations (demand_of).
inline constexpr std::uint64_t kCollCheckBudget = 1ULL << 30;
inline constexpr std::uint64_t kCollCheckBlock = 4096;

// Whether result element `i` is checked under plan `p`.
GPUSCALE_HD inline bool coll_sampled(const CollCheckPlan& p, std::uint64_t i) {
  if (p.every <= 1) return true;
  const std::uint64_t b = i / p.block;
  return b % p.every == 0 || b == (p.count - 1) / p.block;
}

struct CollExpected {
  double value;
  double tolerance;  // 0: exact
};

GPUSCALE_HD inline double coll_abs(double v) { return v < 0 ? -v : v; }

// An exact integer result wrapped to the dtype's width, as integer collectives compute it.
GPUSCALE_HD inline std::int64_t coll_wrap(int bits, std::int64_t v) {
  if (bits == 8) return static_cast<std::int8_t>(static_cast<std::uint8_t>(v & 0xff));
  if (bits == 32) return static_cast<std::int32_t>(static_cast<std::uint32_t>(v & 0xffffffffLL));
  return v;
}

// The reduction over all ranks of element `index` of the send buffers.
GPUSCALE_HD inline CollExpected coll_reduce(const CollCheckPlan& p, std::uint64_t index) {
  std::int64_t acc = 0, magnitude = 0;
  for (int r = 0; r < p.nranks; ++r) {
    const auto v = static_cast<std::int64_t>(collective_input(p.seed, p.op, p.range, r, index, p.nranks, p.contributors));
    magnitude += v < 0 ? -v : v;
    if (r == 0) {
      acc = v;
      continue;
    }
    switch (p.op) {
      case RedOp::sum:
      case RedOp::avg: acc += v; break;
      case RedOp::prod: acc *= v; break;
      case RedOp::min: acc = v < acc ? v : acc; break;
      case RedOp::max: acc = v > acc ? v : acc; break;
    }
  }
  if (p.int_bits != 0) {
    const std::int64_t wrapped = coll_wrap(p.int_bits, acc);
    // avg: the wrapped sum divided toward zero (C++ division truncates, as NCCL's SumPostDiv).
    return {static_cast<double>(p.op == RedOp::avg ? wrapped / p.nranks : wrapped), 0.0};
  }
  if (p.op == RedOp::avg) {
    const double n = static_cast<double>(p.nranks), u = p.unit_roundoff, a = static_cast<double>(magnitude);
    const double e_s = u / n > p.min_subnormal / 2 ? u / n : p.min_subnormal / 2;
    const double k = p.contributors + 1;  // the zeros of the other ranks add no rounding
    const double gamma = k * u < 0.5 ? k * u / (1 - k * u) : 1.0;
    return {static_cast<double>(acc) / n, a * e_s + a * (1 / n + e_s) * gamma + k * p.min_subnormal};
  }
  return {static_cast<double>(acc), 0.0};
}

// Element `i` of rank `rank`'s send buffer, as an exact expected value.
GPUSCALE_HD inline CollExpected coll_source(const CollCheckPlan& p, int rank, std::uint64_t i) {
  return CollExpected{collective_input(p.seed, p.op, p.range, rank, i, p.nranks, p.contributors), 0.0};
}

// NaN and infinities are never within a tolerance.
GPUSCALE_HD inline bool coll_value_ok(double got, const CollExpected& e) {
  return got == e.value || coll_abs(got - e.value) <= e.tolerance;
}

// The plan of rank `rank` for a case.
CollCheckPlan collective_check_plan(const CollCheckCase& c, int rank);

// Expected value (and tolerance) at element `index` of rank `rank`'s result.
double collective_expected(const CollCheckCase& c, int rank, std::uint64_t index);
bool collective_value_ok(const CollCheckCase& c, int rank, std::uint64_t index, double got);

// Number of result elements rank `rank` checks (0 for non-root ranks of reduce).
std::uint64_t collective_result_count(const CollCheckCase& c, int rank);
// Input evaluations per checked element: the ranks for a reduction, else 1.
std::uint64_t collective_check_cost(const CollCheckCase& c);
// How many of rank `rank`'s result elements the check looks at (all of them up to the budget), and the
// input evaluations that takes.
std::uint64_t collective_checked_count(const CollCheckCase& c, int rank);
double collective_check_evaluations(const CollCheckCase& c, int rank);
// Number of send-buffer elements rank `rank` fills with inputs (0 for non-root ranks of broadcast).
std::uint64_t collective_input_count(const CollCheckCase& c, int rank);

}  // namespace gpuscale
