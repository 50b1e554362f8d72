#pragma once
// The kernel twins' tests: a twin found by its kernel's demangled name (so a test reads as the kernel it
// runs, and the mangled names are checked against the module's in test_kernel_table.cpp), launched as
// the emulated runtime launches it.
#include <cxxabi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "tests/emulated_gpu/kernels/kernel_twin.h"

namespace gpuscale_emu::test {

inline std::string demangled(const char* name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> d(abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && d ? std::string(d.get()) : std::string(name);
}

// The twin whose kernel demangles to `signature`, e.g. "void gpuscale::cuda::device_code::init_kernel<float>(float*,
// float*, float*, unsigned long, unsigned long)"; nullptr (and a failure) when there is none.
inline const KernelTwin* twin(const std::string& signature) {
  for (const KernelTwin* t : all_kernel_twins())
    if (demangled(t->name) == signature) {
      EXPECT_EQ(find_kernel_twin(t->name), t);
      return t;
    }
  ADD_FAILURE() << "no twin for " << signature;
  return nullptr;
}

inline LaunchShape shape(unsigned blocks, unsigned threads) {
  LaunchShape s;
  s.grid[0] = blocks;
  s.block[0] = threads;
  return s;
}

// Runs the twin; args[i] points at the kernel's i-th parameter (cudaLaunchKernel's contract).
template <typename... A>
void launch(const KernelTwin* t, const LaunchShape& s, A*... args) {
  ASSERT_NE(t, nullptr);
  void* list[] = {static_cast<void*>(args)...};
  t->run(s, list);
}

template <typename... A>
double bytes(const KernelTwin* t, const LaunchShape& s, A*... args) {
  if (t == nullptr) return -1;
  void* list[] = {static_cast<void*>(args)...};
  return t->bytes_moved(s, list);
}

}  // namespace gpuscale_emu::test
