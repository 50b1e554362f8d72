// The emulated runtime's own state (runtime_state.h).
#include "tests/emulated_gpu/cudart/runtime_state.h"

#include <map>
#include <memory>
#include <mutex>

namespace gpuscale_emu::cudart {
namespace {

thread_local cudaError_t t_last_error = cudaSuccess;

struct Kernels {
  std::mutex mu;
  std::map<const void*, std::unique_ptr<Kernel>> by_host_fun;
};
Kernels& kernels() {
  static auto* k = new Kernels;  // never freed: __cudaUnregisterFatBinary runs at exit
  return *k;
}

}  // namespace

cudaError_t sticky() { return static_cast<cudaError_t>(sticky_error()); }

cudaError_t result(cudaError_t rc) {
  if (const cudaError_t s = sticky(); s != cudaSuccess) rc = s;
  if (rc != cudaSuccess) t_last_error = rc;
  return rc;
}

cudaError_t take_last_error() {
  if (const cudaError_t s = sticky(); s != cudaSuccess) return s;
  const cudaError_t rc = t_last_error;
  t_last_error = cudaSuccess;
  return rc;
}

void register_kernel(const void* host_fun, const char* device_name) {
  std::lock_guard<std::mutex> lock(kernels().mu);
  auto k = std::make_unique<Kernel>();
  k->host_fun = host_fun;
  k->device_name = device_name ? device_name : "";
  kernels().by_host_fun[host_fun] = std::move(k);
}

const Kernel* kernel_of(const void* host_fun) {
  std::lock_guard<std::mutex> lock(kernels().mu);
  const auto it = kernels().by_host_fun.find(host_fun);
  return it == kernels().by_host_fun.end() ? nullptr : it->second.get();
}

gpuscale_emu::Stream* stream(cudaStream_t s) { return stream_of(static_cast<void*>(s)); }

bool have_device() { return current_device() >= 0 && current_device() < device_count(); }

}  // namespace gpuscale_emu::cudart
