// The emulated runtime's memory calls against CUDA's documented behaviour: capacity, cudaMemGetInfo's
// accounting, real copies, errors of bad pointers.
#include <cstdint>
#include <random>
#include <vector>

#include "tests/emulated_gpu/core/cost.h"
#include "tests/emulated_gpu/cudart/emu_test_support.h"

namespace {

TEST(EmulatedCudartMemory, MallocIsAlignedAndChargedToMemGetInfo) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  size_t free0 = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free0, &total), cudaSuccess);
  EXPECT_EQ(total, gpuscale_emu::device(0).memory_total);
  std::mt19937_64 rng(11);
  std::vector<void*> ptrs;
  size_t held = 0;
  for (int i = 0; i < 8; ++i) {
    const size_t bytes = 1 + rng() % (64 << 20);
    void* p = nullptr;
    ASSERT_EQ(cudaMalloc(&p, bytes), cudaSuccess);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 256, 0u) << "cudaMalloc's alignment is at least 256 bytes";
    ptrs.push_back(p);
    held += bytes;
    size_t free = 0;
    ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
    EXPECT_EQ(free, free0 - held);
  }
  for (void* p : ptrs) ASSERT_EQ(cudaFree(p), cudaSuccess);
  size_t free1 = 0;
  ASSERT_EQ(cudaMemGetInfo(&free1, &total), cudaSuccess);
  EXPECT_EQ(free1, free0);
}

TEST(EmulatedCudartMemory, AllocationPastCapacityFailsWithoutStickiness) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  size_t free = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, free + 1), cudaErrorMemoryAllocation);
  // not sticky: cudaGetLastError returns it once and clears it, and the next allocation works
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&p, 1 << 20), cudaSuccess);
  EXPECT_EQ(cudaFree(p), cudaSuccess);
  EXPECT_STREQ(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
}

TEST(EmulatedCudartMemory, BadFreeIsInvalidValue) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  char* p = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&p), 4096), cudaSuccess);
  EXPECT_EQ(cudaFree(p + 16), cudaErrorInvalidValue);  // not the start of an allocation
  int host = 0;
  EXPECT_EQ(cudaFree(&host), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(nullptr), cudaSuccess);  // "If devPtr is 0, no operation is performed"
  EXPECT_EQ(cudaFree(p), cudaSuccess);
  EXPECT_EQ(cudaFree(p), cudaErrorInvalidValue);  // freed twice
  cudaGetLastError();
}

TEST(EmulatedCudartMemory, CopiesMoveTheBytes) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const size_t n = 100003;
  std::vector<std::uint32_t> src(n), back(n, 0);
  std::mt19937 rng(7);
  for (auto& w : src) w = rng();
  std::uint32_t* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(reinterpret_cast<void**>(&pinned), n * 4), cudaSuccess);
  std::uint32_t *a = nullptr, *b = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&a), n * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&b), n * 4), cudaSuccess);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(a, src.data(), n * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(b, 0, n * 4, s), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(b, a, n * 4, cudaMemcpyDeviceToDevice, s), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(pinned, b, n * 4, cudaMemcpyDeviceToHost, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_EQ(std::vector<std::uint32_t>(pinned, pinned + n), src);
  ASSERT_EQ(cudaMemsetAsync(a, 0xab, n * 4, s), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back.data(), a, n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back[0], 0xababababu);
  EXPECT_EQ(back[n - 1], 0xababababu);
  // a copy running past the end of its allocation is refused, nothing written
  EXPECT_EQ(cudaMemcpyAsync(a + 1, src.data(), n * 4, cudaMemcpyHostToDevice, s), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  int host = 0;
  EXPECT_EQ(cudaFreeHost(&host), cudaErrorInvalidValue);  // not from cudaMallocHost
  cudaGetLastError();
  EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess);
  EXPECT_EQ(cudaFree(a), cudaSuccess);
  EXPECT_EQ(cudaFree(b), cudaSuccess);
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
}

// The write log a product cache reads (emu_core.h, "Writes to device memory"): a copy or a set notes
// the range it wrote and nothing else; an event records nothing.
TEST(EmulatedCudartMemory, CopiesAndSetsLogTheRangesTheyWrite) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  std::mt19937 rng(11);
  const size_t n = 1000 + rng() % 1000, at = rng() % n;
  unsigned char *a = nullptr, *b = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&a), n), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&b), n), cudaSuccess);
  const std::vector<gpuscale_emu::WriteRange> whole_a{{a, n}}, whole_b{{b, n}};
  auto epoch = gpuscale_emu::device_write_epoch();
  ASSERT_EQ(cudaMemsetAsync(b + at, 1, 1, nullptr), cudaSuccess);  // one byte of b
  EXPECT_TRUE(gpuscale_emu::unwritten_since(epoch, whole_a));
  EXPECT_FALSE(gpuscale_emu::unwritten_since(epoch, whole_b));
  EXPECT_TRUE(gpuscale_emu::unwritten_since(epoch, {{b, at}}));  // the bytes before it
  EXPECT_FALSE(gpuscale_emu::unwritten_since(epoch, {{b + at, 1}}));
  epoch = gpuscale_emu::device_write_epoch();
  cudaEvent_t e = nullptr;
  ASSERT_EQ(cudaEventCreate(&e), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(e, nullptr), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(a, b, n, cudaMemcpyDeviceToDevice), cudaSuccess);
  EXPECT_FALSE(gpuscale_emu::unwritten_since(epoch, whole_a));
  EXPECT_TRUE(gpuscale_emu::unwritten_since(epoch, whole_b));
  EXPECT_EQ(cudaEventDestroy(e), cudaSuccess);
  EXPECT_EQ(cudaFree(a), cudaSuccess);
  EXPECT_EQ(cudaFree(b), cudaSuccess);
}

TEST(EmulatedCudartMemory, CopyTimesAreTheModels) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const auto& d = gpuscale_emu::device(0);
  const size_t bytes = 64 << 20;
  void *a = nullptr, *b = nullptr, *h = nullptr;
  ASSERT_EQ(cudaMalloc(&a, bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, bytes), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(&h, bytes), cudaSuccess);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  cudaEvent_t e0, e1;
  ASSERT_EQ(cudaEventCreate(&e0), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&e1), cudaSuccess);
  // Oracle from the model: H2D over PCIe at 90% of pcie_gbps plus its latency; D2D reads and writes.
  const double h2d_us = bytes / (d.model.pcie_gbps * d.model.link_efficiency * 1e3) + d.model.pcie_latency_us;
  const double d2d_us = 2.0 * bytes / (d.model.hbm_gbps * d.model.hbm_efficiency * 1e3) + d.model.kernel_floor_us;
  struct Case {
    void* dst;
    const void* src;
    double us;
  };
  for (const Case& c : {Case{a, h, h2d_us}, Case{b, a, d2d_us}, Case{h, b, h2d_us}}) {
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);  // the stream is idle: the host is at its end
    ASSERT_EQ(cudaEventRecord(e0, s), cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(c.dst, c.src, bytes, cudaMemcpyDefault, s), cudaSuccess);
    ASSERT_EQ(cudaEventRecord(e1, s), cudaSuccess);
    ASSERT_EQ(cudaEventSynchronize(e1), cudaSuccess);
    float ms = 0;
    ASSERT_EQ(cudaEventElapsedTime(&ms, e0, e1), cudaSuccess);
    // the copy starts one launch overhead after the event (the host enqueues it then)
    EXPECT_NEAR(ms * 1000.0, d.model.launch_overhead_us + c.us, 1e-6 * c.us + 1e-3);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(s);
  cudaFree(a);
  cudaFree(b);
  cudaFreeHost(h);
}

}  // namespace
