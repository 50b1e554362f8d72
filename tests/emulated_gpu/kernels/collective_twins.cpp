// Twins of the kernels around the NCCL collectives (collectives/nccl/collective_kernels_device.cuh),
// compiled from their own source, one per storage type collective_kernels.cu dispatches over.
#include <cstdint>

// First: the device code below needs the execution model it gives the host.
#include "tests/emulated_gpu/kernels/kernel_runner.h"

#include "collectives/nccl/collective_kernels_device.cuh"

namespace gpuscale_emu::twins {
namespace {

namespace dc = gpuscale::nccl::device_code;

// fill_kernel(p, n, ...) writes n values.
template <typename T>
double fill_bytes(const LaunchShape&, void** args) {
  return static_cast<double>(arg<std::uint64_t>(args, 1)) * sizeof(T);
}

// check_kernel(p, n, plan, wrong) reads only the elements the plan samples (coll_sampled: whole
// blocks of plan.block elements, every plan.every-th and the last), so a sampled check costs less.
template <typename T>
double check_bytes(const LaunchShape&, void** args) {
  const std::uint64_t n = arg<std::uint64_t>(args, 1);
  const auto& plan = arg<gpuscale::CollCheckPlan>(args, 2);
  if (plan.every <= 1 || plan.block == 0) return static_cast<double>(n) * sizeof(T);
  std::uint64_t read = 0;
  for (std::uint64_t start = 0; start < n; start += plan.block)
    if (gpuscale::coll_sampled(plan, start)) read += (n - start < plan.block ? n - start : plan.block);
  return static_cast<double>(read) * sizeof(T);
}

// corrupt_kernel(p): reads and writes element 0.
template <typename T>
double corrupt_bytes(const LaunchShape&, void**) {
  return 2.0 * sizeof(T);
}

}  // namespace

void add_collective_twins(std::vector<TwinEntry>& table) {
  for_each_storage_type([&](auto zero) {
    using T = decltype(zero);
    table.push_back(compiled<&dc::fill_kernel<T>>(&fill_bytes<T>));
    table.push_back(compiled<&dc::check_kernel<T>>(&check_bytes<T>));
    table.push_back(compiled<&dc::corrupt_kernel<T>>(&corrupt_bytes<T>));
  });
}

}  // namespace gpuscale_emu::twins
