// Twins of the kernels around the cuBLASLt GEMM (kernels/cuda/gemm_kernels_device.cuh), compiled from
// their own source, one per storage type (pair of types for the gather) gemm_kernels.cu dispatches over.
#include <cstdint>

// First: the device code below needs the execution model it gives the host.
#include "tests/emulated_gpu/kernels/kernel_runner.h"

#include "kernels/cuda/gemm_kernels_device.cuh"

namespace gpuscale_emu::twins {
namespace {

namespace dc = gpuscale::cuda::device_code;

// fill_kernel(p, n, ...) writes n values.
template <typename T>
double fill_bytes(const LaunchShape&, void** args) {
  return static_cast<double>(arg<std::uint64_t>(args, 1)) * sizeof(T);
}

// gather_kernel(g): for each of g.count sampled entries of C, reads its row and column indices, k
// values of A and of B, and its value of C, and writes them as doubles.
template <typename TI, typename TO>
double gather_bytes(const LaunchShape&, void** args) {
  const auto& g = arg<gpuscale::cuda::GemmGather>(args, 0);
  const double count = g.count, k = static_cast<double>(g.k);
  return count * 2 * sizeof(std::uint64_t) + count * k * 2 * (sizeof(TI) + sizeof(double)) +
         count * (sizeof(TO) + sizeof(double));
}

// ... into its three output arrays and nowhere else.
std::vector<WriteRange> gather_writes(const LaunchShape&, void** args) {
  const auto& g = arg<gpuscale::cuda::GemmGather>(args, 0);
  const std::size_t count = g.count > 0 ? static_cast<std::size_t>(g.count) : 0, per = count * sizeof(double);
  return {{g.a_out, per * g.k}, {g.b_out, per * g.k}, {g.c_out, per}};
}

// corrupt_kernel(c, index): reads and writes one value.
template <typename T>
double corrupt_bytes(const LaunchShape&, void**) {
  return 2.0 * sizeof(T);
}

}  // namespace

void add_gemm_twins(std::vector<TwinEntry>& table) {
  for_each_storage_type([&](auto zero) {
    using T = decltype(zero);
    table.push_back(compiled<&dc::fill_kernel<T>>(&fill_bytes<T>));
    table.push_back(compiled<&dc::corrupt_kernel<T>>(&corrupt_bytes<T>));
    for_each_storage_type([&](auto out_zero) {
      using TO = decltype(out_zero);
      table.push_back(compiled<&dc::gather_kernel<T, TO>>(&gather_bytes<T, TO>, &gather_writes));
    });
  });
}

}  // namespace gpuscale_emu::twins
