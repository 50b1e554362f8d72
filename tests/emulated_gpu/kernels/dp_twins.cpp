// Twins of the dp-step's input fill (training/cuda/dp_kernels_device.cuh), one per storage type
// dp_fill dispatches over, compiled from the kernel's own source.
#include <cstdint>

// First: the device code below needs the execution model it gives the host.
#include "tests/emulated_gpu/kernels/kernel_runner.h"

#include "training/cuda/dp_kernels_device.cuh"

namespace gpuscale_emu::twins {
namespace {

namespace dc = gpuscale::cuda::device_code;

// dp_fill_kernel(p, n, ...) writes n values.
template <typename T>
double fill_bytes(const LaunchShape&, void** args) {
  return static_cast<double>(arg<std::uint64_t>(args, 1)) * sizeof(T);
}

}  // namespace

void add_dp_twins(std::vector<TwinEntry>& table) {
  for_each_storage_type([&](auto zero) {
    using T = decltype(zero);
    table.push_back(compiled<&dc::dp_fill_kernel<T>>(&fill_bytes<T>));
  });
}

}  // namespace gpuscale_emu::twins
