#pragma once
// The STREAM kernels with their byte counts (BabelStream's definitions): bytes = arrays touched x N x
// sizeof(T). Write-allocate traffic is not counted, as in STREAM and BabelStream. Each kernel run alone
// is idempotent (its output never feeds its inputs), so repeating it leaves an output that can be
// checked elementwise against the random inputs.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/random.h"

namespace gpuscale {

enum class StreamOp { copy, scale, add, triad, dot, read, write };

struct StreamKernelSpec {
  StreamOp op;
  std::string_view name;     // benchmark key suffix: "stream.<name>"
  std::string_view formula;  // what the kernel computes
  int arrays_read;
  int arrays_written;
};

inline constexpr std::array<StreamKernelSpec, 7> kStreamKernels{{
    {StreamOp::copy, "copy", "c[i] = a[i]", 1, 1},
    {StreamOp::scale, "scale", "b[i] = s * c[i]", 1, 1},
    {StreamOp::add, "add", "c[i] = a[i] + b[i]", 2, 1},
    {StreamOp::triad, "triad", "a[i] = b[i] + s * c[i]", 2, 1},
    {StreamOp::dot, "dot", "sum += a[i] * b[i]", 2, 0},
    {StreamOp::read, "read", "sum += a[i] (read-only)", 1, 0},
    {StreamOp::write, "write", "a[i] = s (write-only)", 0, 1},
}};

// The scalar s of scale/triad/write (BabelStream uses 0.4).
inline constexpr double kStreamScalar = 0.4;

const StreamKernelSpec& stream_spec(StreamOp op);
std::optional<StreamOp> parse_stream_op(std::string_view name);
// Bytes moved by one pass over arrays of `elements` values of `element_size` bytes.
std::uint64_t stream_bytes(StreamOp op, std::uint64_t elements, std::uint64_t element_size);

// Array identifiers for the input generator.
enum StreamArray : std::uint64_t { kArrayA = 1, kArrayB = 2, kArrayC = 3 };

// Initial value of element i of an array: uniform in [0.5, 1.5), so no value is zero or denormal
// and sums stay well scaled. Backends round it to the array's type.
GPUSCALE_HD inline double stream_input_value(std::uint64_t seed, StreamArray array, std::uint64_t i) {
  return random_uniform(seed, array, i, 0.5, 1.5);
}

}  // namespace gpuscale
