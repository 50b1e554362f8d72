// Kernel launches, events and graphs of the emulated runtime: the work runs, the simulated clock moves
// by the model's durations, launch errors are the documented ones.
#include <random>
#include <vector>

#include "tests/emulated_gpu/core/cost.h"
#include "tests/emulated_gpu/cudart/emu_test_support.h"

namespace {

using emu_test::launch_scale;

struct Buffer {
  float* d = nullptr;
  std::vector<float> host;
  explicit Buffer(unsigned long n, unsigned seed) : host(n) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& v : host) v = u(rng);
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), n * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(d, host.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~Buffer() { cudaFree(d); }
  std::vector<float> read() const {
    std::vector<float> out(host.size());
    EXPECT_EQ(cudaMemcpy(out.data(), d, out.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
};

TEST(EmulatedCudartLaunch, KernelRunsAndLastsTheModelsTime) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const unsigned long n = 1 << 20;
  Buffer x(n, 3);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(e0, s), cudaSuccess);
  ASSERT_EQ(launch_scale(x.d, n, dim3(n / 256), dim3(256), s), cudaSuccess);
  ASSERT_EQ(launch_scale(x.d, n, dim3(n / 256), dim3(256), s), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(e1, s), cudaSuccess);
  // not yet waited for: the end event lies ahead of the host ("cudaErrorNotReady")
  float ms = 0;
  EXPECT_EQ(cudaEventElapsedTime(&ms, e0, e1), cudaErrorNotReady);
  EXPECT_EQ(cudaGetLastError(), cudaErrorNotReady);
  ASSERT_EQ(cudaEventSynchronize(e1), cudaSuccess);
  ASSERT_EQ(cudaEventElapsedTime(&ms, e0, e1), cudaSuccess);
  const auto& m = gpuscale_emu::device(0).model;
  const double kernel_us = 8.0 * n / (m.hbm_gbps * m.hbm_efficiency * 1e3) + m.kernel_floor_us;
  // the first kernel starts one launch overhead after e0; the second follows it (the GPU is behind)
  EXPECT_NEAR(ms * 1000.0, m.launch_overhead_us + 2 * kernel_us, 1e-3);
  const auto out = x.read();
  for (unsigned long i = 0; i < n; i += 997) ASSERT_EQ(out[i], x.host[i] * 4) << i;
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(s);
}

TEST(EmulatedCudartLaunch, EventsNeverRecordedAreInvalidHandles) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  float ms = 0;
  EXPECT_EQ(cudaEventElapsedTime(&ms, e0, e1), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
}

TEST(EmulatedCudartLaunch, InvalidConfigurationIsALaunchErrorClearedByGetLastError) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  Buffer x(4096, 5);
  // 1025 threads per block: over maxThreadsPerBlock (CUDA C Programming Guide, technical specifications)
  EXPECT_EQ(launch_scale(x.d, 4096, dim3(4), dim3(1025), nullptr), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launch_scale(x.d, 4096, dim3(0), dim3(256), nullptr), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launch_scale(x.d, 4096, dim3(1), dim3(32, 32, 65), nullptr), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // cleared: not sticky
  EXPECT_EQ(x.read(), x.host);                 // nothing ran
  EXPECT_EQ(launch_scale(x.d, 4096, dim3(4), dim3(1024), nullptr), cudaSuccess);
  EXPECT_EQ(x.read()[4095], x.host[4095] * 2);
}

TEST(EmulatedCudartLaunch, KernelWithoutTwinIsInvalidDeviceFunction) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  static const char name[] = "_Z13no_such_twinv";
  static int stub = 0;
  void** h = __cudaRegisterFatBinary(nullptr);
  __cudaRegisterFunction(h, reinterpret_cast<const char*>(&stub), const_cast<char*>(name), name, -1, nullptr,
                         nullptr, nullptr, nullptr, nullptr);
  cudaKernel_t k = nullptr;
  ASSERT_EQ(__cudaGetKernel(&k, &stub), cudaSuccess);
  EXPECT_EQ(__cudaLaunchKernel(k, dim3(1), dim3(1), nullptr, 0, nullptr), cudaErrorInvalidDeviceFunction);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDeviceFunction);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(EmulatedCudartLaunch, OccupancyIsBoundedByThreadsAndBlocksPerSm) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  emu_test::scale_kernel();
  const auto& m = gpuscale_emu::device(0).model;
  for (int threads : {32, 64, 128, 256, 512, 1024}) {
    int blocks = -1;
    ASSERT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
                  &blocks, reinterpret_cast<const void*>(&emu_test::scale_stub), threads, 0, 0),
              cudaSuccess);
    EXPECT_EQ(blocks, std::min(m.max_blocks_per_sm, 2048 / threads)) << threads;
  }
}

TEST(EmulatedCudartLaunch, GraphReplayAdvancesTheClockByTheCapturedDurations) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const size_t n = 1 << 22;
  const auto& d = gpuscale_emu::device(0);
  void *a = nullptr, *b = nullptr;
  ASSERT_EQ(cudaMalloc(&a, n), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, n), cudaSuccess);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(b, 0, n, s), cudaSuccess);  // before the capture: runs now
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(a, 0x5a, n, s), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, s), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(a, b, n / 2, cudaMemcpyDeviceToDevice, s), cudaSuccess);
  cudaGraph_t g = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
  std::vector<unsigned char> host(n, 1);
  // captured, not run: b still holds the zeros written before the capture
  ASSERT_EQ(cudaMemcpy(host.data(), b, 16, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(std::vector<unsigned char>(host.begin(), host.begin() + 16), std::vector<unsigned char>(16, 0));
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphDestroy(g), cudaSuccess);
  const double captured_us = gpuscale_emu::memory_us(n, d) + gpuscale_emu::copy_us(n, gpuscale_emu::CopyKind::device_to_device, d) +
                             gpuscale_emu::copy_us(n / 2, gpuscale_emu::CopyKind::device_to_device, d);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int replay = 0; replay < 3; ++replay) {
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    ASSERT_EQ(cudaEventRecord(e0, s), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
    ASSERT_EQ(cudaEventRecord(e1, s), cudaSuccess);
    ASSERT_EQ(cudaEventSynchronize(e1), cudaSuccess);
    float ms = 0;
    ASSERT_EQ(cudaEventElapsedTime(&ms, e0, e1), cudaSuccess);
    // one launch overhead for the whole graph, then its nodes back to back
    EXPECT_NEAR(ms * 1000.0, d.model.launch_overhead_us + captured_us, 1e-3) << replay;
  }
  ASSERT_EQ(cudaMemcpy(host.data(), b, n, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(host[0], 0x5a);
  EXPECT_EQ(host[n - 1], 0x5a);
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(s);
  cudaFree(a);
  cudaFree(b);
}

}  // namespace
