#include "collectives/collective_check.h"

#include <algorithm>
#include <cmath>

#include "collectives/collective_table.h"

namespace gpuscale {
namespace {

double exact_limit(DType t) {
  // Largest magnitude every partial result may reach and stay exact.
  return std::min(dtype_exact_integer_limit(t), 1e6);
}

}  // namespace

int collective_contributors(DType dtype, RedOp op, int nranks) {
  nranks = std::max(1, nranks);
  if (!dtype_is_float(dtype) || (op != RedOp::sum && op != RedOp::avg)) return nranks;
  // Sums: inputs of at least +-2 from each contributor, their total within the exact integers.
  double cap = std::max(1.0, std::floor(exact_limit(dtype) / 2));
  // Averages: the rounding of contributors + 1 terms (k u) stays an eighth of the inputs' scale.
  if (op == RedOp::avg) cap = std::min(cap, std::max(1.0, std::floor(1 / (8 * dtype_epsilon(dtype)))));
  return static_cast<int>(std::min<double>(nranks, cap));
}

std::int64_t collective_input_range(DType dtype, RedOp op, int nranks) {
  const double limit = exact_limit(dtype);
  switch (op) {
    case RedOp::prod: return 1;
    case RedOp::min:
    case RedOp::max: return static_cast<std::int64_t>(std::min(limit, 100.0));
    case RedOp::sum:
    case RedOp::avg: break;
  }
  const int terms = collective_contributors(dtype, op, nranks);
  const double per_rank = std::floor(std::min(limit, 1000.0 * terms) / terms);
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(per_rank));
}

CollCheckPlan collective_check_plan(const CollCheckCase& c, int rank) {
  CollCheckPlan p{};
  p.coll = c.coll;
  p.op = c.op;
  p.nranks = c.nranks;
  p.root = c.root;
  p.rank = rank;
  const CollBlock b = collective_spec(c.coll).block(c.counts, dtype_size(c.dtype), rank, std::max(c.nranks, 1));
  p.per = b.per;
  p.offset = b.offset;
  p.seed = c.seed;
  p.range = collective_input_range(c.dtype, c.op, c.nranks);
  p.int_bits = dtype_is_float(c.dtype) ? 0 : static_cast<int>(dtype_size(c.dtype) * 8);
  p.unit_roundoff = dtype_epsilon(c.dtype);
  p.min_subnormal = dtype_min_subnormal(c.dtype);
  p.contributors = collective_contributors(c.dtype, c.op, c.nranks);
  p.count = collective_result_count(c, rank);
  p.block = kCollCheckBlock;
  p.every = 1;
  const std::uint64_t cost = collective_check_cost(c);
  if (p.count > 0 && p.count > kCollCheckBudget / cost) {
    const std::uint64_t blocks = (p.count + p.block - 1) / p.block;
    const std::uint64_t affordable = std::max<std::uint64_t>(kCollCheckBudget / cost / p.block, 1);
    p.every = std::max<std::uint64_t>((blocks + affordable - 1) / affordable, 2);
  }
  return p;
}

std::uint64_t collective_check_cost(const CollCheckCase& c) {
  return collective_spec(c.coll).reduces ? static_cast<std::uint64_t>(std::max(c.nranks, 1)) : 1;
}

std::uint64_t collective_checked_count(const CollCheckCase& c, int rank) {
  const auto p = collective_check_plan(c, rank);
  if (p.every <= 1) return p.count;
  const std::uint64_t blocks = (p.count + p.block - 1) / p.block, last = blocks - 1;
  std::uint64_t n = 0;
  for (std::uint64_t b = 0; b < blocks; b += p.every) n += b == last ? p.count - b * p.block : p.block;
  if (last % p.every != 0) n += p.count - last * p.block;  // the tail, when the stride missed it
  return n;
}

double collective_check_evaluations(const CollCheckCase& c, int rank) {
  return static_cast<double>(collective_checked_count(c, rank)) * static_cast<double>(collective_check_cost(c));
}

double collective_expected(const CollCheckCase& c, int rank, std::uint64_t index) {
  return coll_expected(collective_check_plan(c, rank), index).value;
}

bool collective_value_ok(const CollCheckCase& c, int rank, std::uint64_t index, double got) {
  return coll_value_ok(got, coll_expected(collective_check_plan(c, rank), index));
}

std::uint64_t collective_result_count(const CollCheckCase& c, int rank) {
  const auto& spec = collective_spec(c.coll);
  const int n = std::max(c.nranks, 1);
  return spec.result_count(c.counts, spec.block(c.counts, dtype_size(c.dtype), rank, n), rank == c.root, n);
}

std::uint64_t collective_input_count(const CollCheckCase& c, int rank) {
  return collective_spec(c.coll).input_count(c.counts, rank == c.root);
}

}  // namespace gpuscale
