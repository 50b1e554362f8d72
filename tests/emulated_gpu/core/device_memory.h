#pragma once
// Device memory of the emulated node: host memory, charged to a device's capacity and kept in a map of
// pointer ranges so any emulated library can tell which device a pointer belongs to (CUDA's unified
// addressing: cudaPointerGetAttributes, CUDA Runtime API "Unified Addressing").
#include <cstddef>

namespace gpuscale_emu {

struct Allocation {
  char* base = nullptr;
  std::size_t bytes = 0;
  int device = 0;
};

// Memory on `ordinal`, 256-byte aligned (CUDA Runtime API, cudaMalloc: "The allocated memory is
// suitably aligned for any kind of variable"; the CUDA C Programming Guide, "Device Memory Accesses":
// allocations are aligned to at least 256 bytes). nullptr when it would exceed the device's capacity.
void* device_alloc(int ordinal, std::size_t bytes);
// false when `p` is not the start of a live allocation (nothing freed).
bool device_free(void* p);
// The allocation holding `p`, or nullptr (host memory). Valid until that allocation is freed.
const Allocation* find_allocation(const void* p);

}  // namespace gpuscale_emu
