// Twins of the copy benchmarks' fill and count kernels, compiled from their own source
// (kernels/cuda/copy_kernels_device.cuh), with their cost.
#include <cstdint>

// First: the device code below needs the execution model it gives the host.
#include "tests/emulated_gpu/kernels/kernel_runner.h"

#include "kernels/cuda/copy_kernels_device.cuh"

namespace gpuscale_emu::twins {
namespace {

namespace dc = gpuscale::cuda::device_code;

// fill_kernel(p, n, seed) writes n words; count_kernel(p, n, seed, counts) reads them (its two atomics
// per block that finds a wrong word are left out: a handful of bytes against the buffer).
double words_bytes(const LaunchShape&, void** args) {
  return static_cast<double>(arg<std::uint64_t>(args, 1)) * sizeof(std::uint32_t);
}

}  // namespace

void add_copy_twins(std::vector<TwinEntry>& table) {
  table.push_back(compiled<&dc::fill_kernel>(&words_bytes));
  table.push_back(compiled<&dc::count_kernel>(&words_bytes));
}

}  // namespace gpuscale_emu::twins
