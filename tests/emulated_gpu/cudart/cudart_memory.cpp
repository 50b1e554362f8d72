// Memory management of the emulated libcudart.so.13: allocations charged to the device (core's
// device_memory.h), copies that move the real bytes and charge the model's time (core/cost.h).
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "tests/emulated_gpu/core/cost.h"
#include "tests/emulated_gpu/core/device_memory.h"
#include "tests/emulated_gpu/cudart/runtime_state.h"

using namespace gpuscale_emu;
using gpuscale_emu::cudart::result;

namespace {

std::mutex g_pinned_mu;
std::set<void*> g_pinned;  // cudaMallocHost's allocations, for cudaFreeHost

// Where one side of a copy lies: a device allocation (which must hold all `count` bytes) or host memory.
struct Side {
  const Allocation* alloc = nullptr;
  bool fits = true;
};
Side side(const void* p, std::size_t count) {
  Side s;
  s.alloc = find_allocation(p);
  if (s.alloc) s.fits = static_cast<const char*>(p) + count <= s.alloc->base + s.alloc->bytes;
  return s;
}

// One copy: its kind from where the pointers lie (unified addressing: CUDA Runtime API, cudaMemcpy,
// "cudaMemcpyDefault ... the type of transfer is inferred from the pointer values"), its time from the
// model, the bytes moved when it runs. The `kind` argument is not checked against the pointers.
cudaError_t copy(void* dst, const void* src, std::size_t count, Stream* s) {
  const Side d = side(dst, count), r = side(src, count);
  if (!d.fits || !r.fits) return cudaErrorInvalidValue;  // a range past the end of its allocation
  Operation op;
  op.kind = Operation::Kind::memory;
  if (d.alloc && r.alloc && d.alloc->device == r.alloc->device) {
    op.what = "cudaMemcpy device to device";
    op.duration_us = copy_us(static_cast<double>(count), CopyKind::device_to_device, device(d.alloc->device));
  } else if (d.alloc && r.alloc) {
    op.what = "cudaMemcpy peer";
    op.duration_us = copy_us(static_cast<double>(count), CopyKind::peer, device(r.alloc->device));
    op.kind = Operation::Kind::communication;
  } else if (d.alloc) {
    op.what = "cudaMemcpy host to device";
    op.duration_us = copy_us(static_cast<double>(count), CopyKind::host_to_device, device(d.alloc->device));
    op.kind = Operation::Kind::other;
  } else if (r.alloc) {
    op.what = "cudaMemcpy device to host";
    op.duration_us = copy_us(static_cast<double>(count), CopyKind::device_to_host, device(r.alloc->device));
    op.kind = Operation::Kind::other;
  } else {
    op.what = "cudaMemcpy host to host";  // not a device operation: no device time
    op.kind = Operation::Kind::other;
  }
  op.writes = std::vector<WriteRange>{{dst, count}};
  op.work = [dst, src, count] {
    if (count) std::memmove(dst, src, count);
  };
  enqueue(s, std::move(op));
  return cudaSuccess;
}

}  // namespace

EMU_CUDART_API cudaError_t cudaMalloc(void** devPtr, size_t size) {
  if (!devPtr) return result(cudaErrorInvalidValue);
  if (cudart::sticky()) return result(cudart::sticky());
  if (!cudart::have_device()) return result(cudaErrorNoDevice);
  void* p = device_alloc(current_device(), size);
  // cudaMalloc: "cudaErrorMemoryAllocation" when it cannot allocate; not sticky (CUDA Runtime API,
  // "Error Handling": only errors from kernel execution corrupt the context).
  if (!p) return result(cudaErrorMemoryAllocation);
  *devPtr = p;
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaFree(void* devPtr) {
  if (cudart::sticky()) return result(cudart::sticky());
  if (!devPtr) return result(cudaSuccess);  // cudaFree: "If devPtr is 0, no operation is performed"
  const Allocation* a = find_allocation(devPtr);
  if (!a || a->base != devPtr) return result(cudaErrorInvalidValue);
  wait_for(device_clock_us(a->device));  // cudaFree synchronizes the device before releasing
  return result(device_free(devPtr) ? cudaSuccess : cudaErrorInvalidValue);
}

EMU_CUDART_API cudaError_t cudaMallocHost(void** ptr, size_t size) {
  if (!ptr) return result(cudaErrorInvalidValue);
  // page-locked host memory, page aligned as the driver's pinned allocations are
  void* p = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096 + (size == 0 ? 4096 : 0));
  if (!p) return result(cudaErrorMemoryAllocation);
  std::lock_guard<std::mutex> lock(g_pinned_mu);
  g_pinned.insert(p);
  *ptr = p;
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaFreeHost(void* ptr) {
  if (!ptr) return result(cudaSuccess);
  {
    std::lock_guard<std::mutex> lock(g_pinned_mu);
    if (g_pinned.erase(ptr) == 0) return result(cudaErrorInvalidValue);
  }
  std::free(ptr);
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  if (!free || !total) return result(cudaErrorInvalidValue);
  if (!cudart::have_device()) return result(cudaErrorNoDevice);
  const Device& d = device(current_device());
  *total = d.memory_total;
  *free = d.memory_total - d.memory_held;  // no memory kept back by the emulated context
  return result(cudaSuccess);
}

EMU_CUDART_API cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind) {
  if (cudart::sticky()) return result(cudart::sticky());
  if (!cudart::have_device()) return result(cudaErrorNoDevice);
  Stream* s = cudart::stream(nullptr);
  const cudaError_t rc = copy(dst, src, count, s);
  // cudaMemcpy is synchronous to the host ("API synchronization behavior": "for transfers from device
  // memory to pageable host memory, the function will return only once the copy has completed").
  if (rc == cudaSuccess) wait_for(s->clock_us);
  return result(rc);
}

EMU_CUDART_API cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind,
                                           cudaStream_t stream) {
  if (cudart::sticky()) return result(cudart::sticky());
  if (!cudart::have_device()) return result(cudaErrorNoDevice);
  return result(copy(dst, src, count, cudart::stream(stream)));
}

EMU_CUDART_API cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice,
                                               size_t count, cudaStream_t stream) {
  if (cudart::sticky()) return result(cudart::sticky());
  if (dstDevice < 0 || dstDevice >= device_count() || srcDevice < 0 || srcDevice >= device_count())
    return result(cudaErrorInvalidDevice);
  const Allocation* d = find_allocation(dst);
  const Allocation* r = find_allocation(src);
  // the pointers must be memory of the devices named (cudaMemcpyPeerAsync: "Copies memory from one
  // device to memory on another device")
  if (!d || !r || d->device != dstDevice || r->device != srcDevice) return result(cudaErrorInvalidValue);
  return result(copy(dst, src, count, cudart::stream(stream)));
}

EMU_CUDART_API cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
  if (cudart::sticky()) return result(cudart::sticky());
  const Side d = side(devPtr, count);
  if (!d.alloc || !d.fits) return result(cudaErrorInvalidValue);
  Stream* s = cudart::stream(stream);
  Operation op;
  op.what = "cudaMemset";
  op.kind = Operation::Kind::memory;
  op.launch = false;
  op.duration_us = memory_us(static_cast<double>(count), device(d.alloc->device));  // one write of each byte
  op.writes = std::vector<WriteRange>{{devPtr, count}};
  op.work = [devPtr, value, count] { std::memset(devPtr, value, count); };
  enqueue(s, std::move(op));
  return result(cudaSuccess);
}
