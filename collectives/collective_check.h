#pragma once
// Exact correctness checks for collectives (nccl-tests' -c, with random inputs). Every rank's input is
// a function of (seed, rank, index), so any rank can compute what it must receive without talking to
// the others. Inputs are small random integers whose range depends on the dtype, the op and the rank
// count, chosen so that every sum, product, min and max is exactly representable: any difference is a
// wrong value, not rounding. Only avg allows rounding (2 units in the last place, as nccl-tests).
#include <cstdint>

#include "collectives/collective_table.h"
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

// Inputs are integers in [-range, range] (prod uses -1 and 1 only).
std::int64_t collective_input_range(DType dtype, RedOp op, int nranks);

// Value of element `index` of rank `rank`'s send buffer.
GPUSCALE_HD inline double collective_input(std::uint64_t seed, RedOp op, std::int64_t range, int rank,
                                           std::uint64_t index) {
  const std::uint64_t stream = 0x636f6c6cULL + static_cast<std::uint64_t>(rank);
  if (op == RedOp::prod) return random_int(seed, stream, index, 0, 1) ? 1.0 : -1.0;
  return static_cast<double>(random_int(seed, stream, index, -range, range));
}

// What rank `rank` must hold at element `index` of its result (indexing the result region: the
// receive buffer, or for reduce_scatter the rank's own block). Reductions follow the dtype's
// arithmetic: integers wrap, floats are exact by the choice of range.
double collective_expected(const CollCheckCase& c, int rank, std::uint64_t index);

// Number of result elements rank `rank` checks (0 for non-root ranks of reduce).
std::uint64_t collective_result_count(const CollCheckCase& c, int rank);

// Does a received value match? Exact, except avg (2 ulp) and float sums whose range could not be
// kept exact for this many ranks (then the rounding of n terms is allowed).
bool collective_value_ok(const CollCheckCase& c, double got, double expected);

}  // namespace gpuscale
