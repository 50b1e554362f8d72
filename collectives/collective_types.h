#pragma once
// The plain types every collective shares (which reduction, element counts), in C++17 so CUDA kernels
// (compiled as C++17) share them with the host code. The collectives themselves, one block each, are
// in collectives/collective_table.h.
#include <cstdint>
#include <vector>

namespace gpuscale {

// Defined, with one value per collective, in collectives/collective_table.h; declared here so the
// check's plain data can name it.
enum class Collective : int;
enum class RedOp { sum, prod, min, max, avg };

// How alltoallv spreads every sender's data over its peers (collectives/alltoallv_plan.h): uniform,
// a Zipf exponent, or one weight per receiving rank (the same for every sender).
struct AlltoallvSkew {
  double zipf = 0;              // > 0: peer d's share (d + 1)^-zipf / H
  std::vector<double> weights;  // non-empty: peer d's share weights[d] / sum; its size is the group's
  bool operator==(const AlltoallvSkew& o) const { return zipf == o.zipf && weights == o.weights; }
  bool operator!=(const AlltoallvSkew& o) const { return !(*this == o); }
};

// Element counts of one operation, as nccl-tests' GetCollByteCount computes them.
struct CollCounts {
  std::uint64_t send = 0;   // elements in the send buffer
  std::uint64_t recv = 0;   // elements in the receive buffer
  std::uint64_t param = 0;  // the count passed to the collective call (per rank where that applies)
  std::uint64_t send_inplace_offset = 0;  // in-place: where the send data lives inside the receive buffer
  std::uint64_t recv_inplace_offset = 0;
  AlltoallvSkew skew;  // alltoallv: how each rank's data spreads over its peers
};

// One rank's share of a collective whose result is n blocks from n senders: the elements per block and
// where its block starts in every sender's buffer (alltoall: param at rank x param; alltoallv: its skew's).
struct CollBlock {
  std::uint64_t per = 0, offset = 0;
};

}  // namespace gpuscale
