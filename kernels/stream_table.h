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

// Adding a kernel: an op here, its row in kStreamKernels and its case in stream_formula (this file),
// then its loop in each backend that runs it (kernels/cpu/cpu_stream.cpp, kernels/cuda/stream_kernels.cu).
enum class StreamOp { copy, scale, add, triad, dot, read, write };

// The arrays a, b and c (also the input generator's stream identifiers); kNoArray: a reduction's output
// is its sum, not an array.
enum StreamArray : std::uint64_t { kNoArray = 0, kArrayA = 1, kArrayB = 2, kArrayC = 3 };

struct StreamKernelSpec {
  StreamOp op;
  std::string_view name;     // benchmark key suffix: "stream.<name>"
  std::string_view formula;  // what the kernel computes
  int arrays_read;
  int arrays_written;
  StreamArray output;        // the array it writes, which verification checks (kNoArray: the sum)
};

inline constexpr std::array<StreamKernelSpec, 7> kStreamKernels{{
    {StreamOp::copy, "copy", "c[i] = a[i]", 1, 1, kArrayC},
    {StreamOp::scale, "scale", "b[i] = s * c[i]", 1, 1, kArrayB},
    {StreamOp::add, "add", "c[i] = a[i] + b[i]", 2, 1, kArrayC},
    {StreamOp::triad, "triad", "a[i] = b[i] + s * c[i]", 2, 1, kArrayA},
    {StreamOp::dot, "dot", "sum += a[i] * b[i]", 2, 0, kNoArray},
    {StreamOp::read, "read", "sum += a[i] (read-only)", 1, 0, kNoArray},
    {StreamOp::write, "write", "a[i] = s (write-only)", 0, 1, kArrayA},
}};

// The scalar s of scale/triad/write (BabelStream uses 0.4).
inline constexpr double kStreamScalar = 0.4;

// The formula of each kernel, element i, computed in T: the value it writes to its output array, or
// for a reduction the term it adds to the sum. Verification (kernels/stream_verify.h) uses it.
template <typename T>
T stream_formula(StreamOp op, T a, T b, T c) {
  const T s = static_cast<T>(kStreamScalar);
  switch (op) {
    case StreamOp::copy: return a;
    case StreamOp::scale: return s * c;
    case StreamOp::add: return a + b;
    case StreamOp::triad: return b + s * c;
    case StreamOp::write: return s;
    case StreamOp::dot: return a * b;
    case StreamOp::read: return a;
  }
  return T(0);
}

const StreamKernelSpec& stream_spec(StreamOp op);
// Bytes moved by one pass over arrays of `elements` values of `element_size` bytes.
std::uint64_t stream_bytes(StreamOp op, std::uint64_t elements, std::uint64_t element_size);

// Initial value of element i of an array: uniform in [0.5, 1.5), so no value is zero or denormal
// and sums stay well scaled. Backends round it to the array's type.
GPUSCALE_HD inline double stream_input_value(std::uint64_t seed, StreamArray array, std::uint64_t i) {
  return random_uniform(seed, array, i, 0.5, 1.5);
}

}  // namespace gpuscale
