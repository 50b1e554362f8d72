#include "collectives/collective_check.h"

#include <algorithm>
#include <cmath>

namespace gpuscale {
namespace {

// Wraps an exact integer result to the dtype's width, as integer collectives do.
double wrap_integer(DType t, std::int64_t v) {
  if (t == DType::int8) return static_cast<double>(static_cast<std::int8_t>(static_cast<std::uint8_t>(v & 0xff)));
  if (t == DType::int32)
    return static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(v & 0xffffffffLL)));
  return static_cast<double>(v);
}

double exact_limit(DType t) {
  // Largest magnitude every partial result may reach and stay exact.
  return std::min(dtype_exact_integer_limit(t), 1e6);
}

// Reduction over all ranks of element `index`.
double reduce_all(const CollCheckCase& c, std::uint64_t index) {
  const auto range = collective_input_range(c.dtype, c.op, c.nranks);
  std::int64_t acc = 0;
  for (int r = 0; r < c.nranks; ++r) {
    const auto v = static_cast<std::int64_t>(collective_input(c.seed, c.op, range, r, index));
    if (r == 0) {
      acc = v;
      continue;
    }
    switch (c.op) {
      case RedOp::sum:
      case RedOp::avg: acc += v; break;
      case RedOp::prod: acc *= v; break;
      case RedOp::min: acc = std::min(acc, v); break;
      case RedOp::max: acc = std::max(acc, v); break;
    }
  }
  if (c.op == RedOp::avg) {
    if (!dtype_is_float(c.dtype)) return wrap_integer(c.dtype, acc / c.nranks);
    return static_cast<double>(acc) / c.nranks;
  }
  return dtype_is_float(c.dtype) ? static_cast<double>(acc) : wrap_integer(c.dtype, acc);
}

double input(const CollCheckCase& c, int rank, std::uint64_t index) {
  return collective_input(c.seed, c.op, collective_input_range(c.dtype, c.op, c.nranks), rank, index);
}

}  // namespace

std::int64_t collective_input_range(DType dtype, RedOp op, int nranks) {
  const double limit = exact_limit(dtype);
  switch (op) {
    case RedOp::prod: return 1;
    case RedOp::min:
    case RedOp::max: return static_cast<std::int64_t>(std::min(limit, 100.0));
    case RedOp::sum:
    case RedOp::avg: break;
  }
  const double per_rank = std::floor(std::min(limit, 1000.0 * nranks) / std::max(1, nranks));
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(per_rank));
}

std::uint64_t collective_result_count(const CollCheckCase& c, int rank) {
  switch (c.coll) {
    case Collective::reduce: return rank == c.root ? c.counts.recv : 0;
    case Collective::reduce_scatter: return c.counts.param;
    default: return c.counts.recv;
  }
}

double collective_expected(const CollCheckCase& c, int rank, std::uint64_t index) {
  const std::uint64_t per = c.counts.param;
  switch (c.coll) {
    case Collective::all_reduce:
    case Collective::reduce: return reduce_all(c, index);
    case Collective::reduce_scatter: return reduce_all(c, static_cast<std::uint64_t>(rank) * per + index);
    case Collective::broadcast: return input(c, c.root, index);
    case Collective::all_gather: return input(c, static_cast<int>(index / per), index % per);
    case Collective::alltoall:
      // Block j of my receive buffer is block `rank` of rank j's send buffer.
      return input(c, static_cast<int>(index / per), static_cast<std::uint64_t>(rank) * per + index % per);
    case Collective::sendrecv: return input(c, (rank - 1 + c.nranks) % c.nranks, index);
  }
  return 0;
}

bool collective_value_ok(const CollCheckCase& c, double got, double expected) {
  if (got == expected) return true;
  if (!dtype_is_float(c.dtype)) return false;
  const double eps = dtype_epsilon(c.dtype);
  if (c.op == RedOp::avg) return std::fabs(got - expected) <= 2 * 2 * eps * std::fabs(expected);  // 2 ulp
  const bool reduces = collective_spec(c.coll).reduces;
  const auto range = collective_input_range(c.dtype, c.op, c.nranks);
  if (reduces && c.op == RedOp::sum && static_cast<double>(range) * c.nranks > exact_limit(c.dtype))
    return std::fabs(got - expected) <= eps * static_cast<double>(range) * c.nranks * c.nranks;
  return false;
}

}  // namespace gpuscale
