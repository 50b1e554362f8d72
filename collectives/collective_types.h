#pragma once
// The plain types every collective shares (which reduction, element counts), in C++17 so CUDA kernels
// (compiled as C++17) share them with the host code. The collectives themselves, one block each, are
// in collectives/collective_table.h.
#include <cstdint>

namespace gpuscale {

// Defined, with one value per collective, in collectives/collective_table.h; declared here so the
// check's plain data can name it.
enum class Collective : int;
enum class RedOp { sum, prod, min, max, avg };

// Element counts of one operation, as nccl-tests' GetCollByteCount computes them.
struct CollCounts {
  std::uint64_t send = 0;   // elements in the send buffer
  std::uint64_t recv = 0;   // elements in the receive buffer
  std::uint64_t param = 0;  // the count passed to the collective call (per rank where that applies)
  std::uint64_t send_inplace_offset = 0;  // in-place: where the send data lives inside the receive buffer
  std::uint64_t recv_inplace_offset = 0;
  double skew = 0;  // alltoallv: the Zipf exponent spreading each rank's data over its peers (0: uniform)
};

// One rank's share of a collective whose result is n blocks from n senders: the elements per block and
// where its block starts in every sender's buffer (alltoall: param at rank x param; alltoallv: its skew's).
struct CollBlock {
  std::uint64_t per = 0, offset = 0;
};

}  // namespace gpuscale
