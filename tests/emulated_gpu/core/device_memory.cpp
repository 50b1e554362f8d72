// Device memory: host allocations charged to a device and found again by address (device_memory.h).
#include "tests/emulated_gpu/core/device_memory.h"

#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>

#include "tests/emulated_gpu/core/emu_core.h"

namespace gpuscale_emu {
namespace {

constexpr std::size_t kAlignment = 256;  // cudaMalloc's alignment (device_memory.h)

struct Allocations {
  std::mutex mu;
  std::map<const char*, Allocation> by_base;
};
Allocations& allocations() {
  static auto* a = new Allocations;  // never freed: the runtime may be called during static destruction
  return *a;
}

}  // namespace

void* device_alloc(int ordinal, std::size_t bytes) {
  const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (!charge(ordinal, bytes)) return nullptr;
  char* p = static_cast<char*>(std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded));
  if (!p) {
    release(ordinal, bytes);
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(allocations().mu);
  allocations().by_base[p] = Allocation{p, bytes, ordinal};
  return p;
}

bool device_free(void* p) {
  Allocation a;
  {
    std::lock_guard<std::mutex> lock(allocations().mu);
    const auto it = allocations().by_base.find(static_cast<const char*>(p));
    if (it == allocations().by_base.end()) return false;
    a = it->second;
    allocations().by_base.erase(it);
  }
  release(a.device, a.bytes);
  std::free(a.base);
  return true;
}

const Allocation* find_allocation(const void* p) {
  const char* c = static_cast<const char*>(p);
  std::lock_guard<std::mutex> lock(allocations().mu);
  auto& m = allocations().by_base;
  auto it = m.upper_bound(c);
  if (it == m.begin()) return nullptr;
  it = std::prev(it);
  const Allocation& a = it->second;
  // an address inside [base, base + bytes); a zero-byte allocation holds only its base
  if (c == a.base || c < a.base + a.bytes) return &a;
  return nullptr;
}

}  // namespace gpuscale_emu
