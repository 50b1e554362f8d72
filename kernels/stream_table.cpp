#include "kernels/stream_table.h"

namespace gpuscale {

const StreamKernelSpec& stream_spec(StreamOp op) {
  for (const auto& k : kStreamKernels)
    if (k.op == op) return k;
  return kStreamKernels[0];  // unreachable: every op is in the table
}

std::uint64_t stream_bytes(StreamOp op, std::uint64_t elements, std::uint64_t element_size) {
  const auto& k = stream_spec(op);
  return static_cast<std::uint64_t>(k.arrays_read + k.arrays_written) * elements * element_size;
}

}  // namespace gpuscale
