// Twins of the STREAM kernels that compile from their own source (kernels/cuda/stream_kernels_device.cuh),
// each with its cost: the bytes docs/cuda.md's STREAM table counts (BabelStream's: what the kernel reads
// plus what it writes, no write-allocate traffic). sum_kernel's twin is stream_sum_twin.cpp.
#include <cstdint>

// First: the device code below needs the execution model it gives the host.
#include "tests/emulated_gpu/kernels/kernel_runner.h"

#include "kernels/cuda/stream_kernels_device.cuh"

namespace gpuscale_emu::twins {
namespace {

namespace dc = gpuscale::cuda::device_code;

// init_kernel(a, b, c, n, seed): writes three arrays.
template <typename T>
double init_bytes(const LaunchShape&, void** args) {
  return 3.0 * static_cast<double>(arg<std::uint64_t>(args, 3)) * sizeof(T);
}

// binary_kernel(out, x, y, n, f): reads x, reads y when it is given, writes out.
template <typename T>
double binary_bytes(const LaunchShape&, void** args) {
  const double arrays = arg<const T*>(args, 2) != nullptr ? 3 : 2;
  return arrays * static_cast<double>(arg<std::uint64_t>(args, 3)) * sizeof(T);
}

// write_kernel(out, n, value): writes one array.
template <typename T>
double write_bytes(const LaunchShape&, void** args) {
  return static_cast<double>(arg<std::uint64_t>(args, 1)) * sizeof(T);
}

// copy_words (binary_kernel<uint32_t, Copy>: out, x, n): what it writes and reads, so that a copy
// between two GPUs (copy.p2p_sm) is charged at the link's bandwidth.
std::vector<WriteRange> words_written(const LaunchShape&, void** args) {
  return {{arg<std::uint32_t*>(args, 0), arg<std::uint64_t>(args, 3) * sizeof(std::uint32_t)}};
}
std::vector<WriteRange> words_read(const LaunchShape&, void** args) {
  return {{arg<const std::uint32_t*>(args, 1), arg<std::uint64_t>(args, 3) * sizeof(std::uint32_t)}};
}

// What stream_init and stream_run launch for T (stream_kernels.cu).
template <typename T>
void add_typed(std::vector<TwinEntry>& table) {
  table.push_back(compiled<&dc::init_kernel<T>>(&init_bytes<T>));
  table.push_back(compiled<&dc::binary_kernel<T, dc::Copy<T>>>(&binary_bytes<T>));
  table.push_back(compiled<&dc::binary_kernel<T, dc::Scale<T>>>(&binary_bytes<T>));
  table.push_back(compiled<&dc::binary_kernel<T, dc::Add<T>>>(&binary_bytes<T>));
  table.push_back(compiled<&dc::binary_kernel<T, dc::Triad<T>>>(&binary_bytes<T>));
  table.push_back(compiled<&dc::write_kernel<T>>(&write_bytes<T>));
}

}  // namespace

void add_stream_twins(std::vector<TwinEntry>& table) {
  add_typed<float>(table);
  add_typed<double>(table);
  // copy_words: the SM-driven copy of the copy benchmarks.
  table.push_back(compiled<&dc::binary_kernel<std::uint32_t, dc::Copy<std::uint32_t>>>(&binary_bytes<std::uint32_t>,
                                                                                      &words_written, &words_read));
}

}  // namespace gpuscale_emu::twins
