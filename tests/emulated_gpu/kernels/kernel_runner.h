#pragma once
// How a kernel compiled for the host runs one launch (tests only): every thread of every block, one at a
// time, with the index variables of host_cuda_compat.h set to that thread's. A serial order is one legal
// schedule of a kernel whose threads do not wait for each other (CUDA C Programming Guide, "Thread
// Hierarchy": blocks run in any order; threads of a block only order themselves through
// __syncthreads), and integer atomics give the same result in every order. A kernel that synchronises
// its block has a hand-written twin instead.
#include <cstddef>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/emulated_gpu/kernels/host_cuda_compat.h"
#include "tests/emulated_gpu/kernels/kernel_twin.h"

namespace gpuscale_emu::twins {

// A table entry before it is named: the host function whose symbol is the kernel's mangled name
// (kernel_names.cpp reads it from the library's symbol table), and the twin.
struct TwinEntry {
  const void* kernel;
  KernelTwin twin;
};

// The kernel's i-th argument: cudaLaunchKernel's args[i] points at a value of the parameter's type.
template <typename P>
const P& arg(void** args, std::size_t i) {
  return *static_cast<const P*>(args[i]);
}

// Calls body() once per thread of the launch, blocks in order, threads in order within each block.
template <typename Body>
void for_each_thread(const LaunchShape& s, Body&& body) {
  gridDim = dim3(s.grid[0], s.grid[1], s.grid[2]);
  blockDim = dim3(s.block[0], s.block[1], s.block[2]);
  for (unsigned bz = 0; bz < s.grid[2]; ++bz)
    for (unsigned by = 0; by < s.grid[1]; ++by)
      for (unsigned bx = 0; bx < s.grid[0]; ++bx) {
        blockIdx = make_uint3(bx, by, bz);
        for (unsigned tz = 0; tz < s.block[2]; ++tz)
          for (unsigned ty = 0; ty < s.block[1]; ++ty)
            for (unsigned tx = 0; tx < s.block[0]; ++tx) {
              threadIdx = make_uint3(tx, ty, tz);
              body();
            }
      }
}

template <typename... P, std::size_t... I>
void run_kernel(void (*kernel)(P...), const LaunchShape& s, void** args, std::index_sequence<I...>) {
  // The arguments are copied once, as the launch copies them to the device; each thread gets them by
  // value, as a kernel's parameters are per thread.
  const std::tuple<P...> values{arg<P>(args, I)...};
  for_each_thread(s, [&] { kernel(std::get<I>(values)...); });
}

template <typename... P>
constexpr std::size_t arity(void (*)(P...)) {
  return sizeof...(P);
}

// The twin of a kernel compiled for the host from its own source.
template <auto Kernel>
void run_host_compiled(const LaunchShape& s, void** args) {
  run_kernel(Kernel, s, args, std::make_index_sequence<arity(Kernel)>{});
}

// An entry for a kernel compiled for the host, with its cost and, where stated, what it writes.
template <auto Kernel>
TwinEntry compiled(double (*bytes_moved)(const LaunchShape&, void**),
                   std::vector<WriteRange> (*writes)(const LaunchShape&, void**) = nullptr,
                   std::vector<WriteRange> (*reads)(const LaunchShape&, void**) = nullptr) {
  return {reinterpret_cast<const void*>(Kernel),
          KernelTwin{nullptr, &run_host_compiled<Kernel>, bytes_moved, writes, reads}};
}

// Calls f(T{}) once per row of core/dtype_table.def with a CUDA storage type: the types
// with_storage_type (kernels/cuda/device_types.cuh) dispatches a launch over, so the twins follow the
// table as the launches do. A storage type two rows share (float: fp32, tf32) comes twice; the table
// keeps one entry per kernel.
template <typename F>
void for_each_storage_type(F&& f) {
#define GPUSCALE_DTYPE_CUDA(id, storage) f(storage{});
#include "core/dtype_table.def"
}

// Each source file's twins, added to the table (kernel_table.cpp).
void add_stream_twins(std::vector<TwinEntry>& table);
void add_stream_sum_twins(std::vector<TwinEntry>& table);
void add_copy_twins(std::vector<TwinEntry>& table);
void add_gemm_twins(std::vector<TwinEntry>& table);
void add_collective_twins(std::vector<TwinEntry>& table);
void add_dp_twins(std::vector<TwinEntry>& table);

}  // namespace gpuscale_emu::twins
