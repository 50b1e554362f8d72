#pragma once
// The plain types of the collective table (which collective, which reduction, element counts), in
// C++17 so CUDA kernels (compiled as C++17) share them with the host code.
#include <cstdint>

namespace gpuscale {

enum class Collective { all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv };
enum class RedOp { sum, prod, min, max, avg };

// Element counts of one operation, as nccl-tests' GetCollByteCount computes them.
struct CollCounts {
  std::uint64_t send = 0;   // elements in the send buffer
  std::uint64_t recv = 0;   // elements in the receive buffer
  std::uint64_t param = 0;  // the count passed to the collective call (per rank where that applies)
  std::uint64_t send_inplace_offset = 0;  // in-place: where the send data lives inside the receive buffer
  std::uint64_t recv_inplace_offset = 0;
};

}  // namespace gpuscale
