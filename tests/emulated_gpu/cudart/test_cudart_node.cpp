// The emulated node as the runtime shows it: scenario GPUs and MIG instances, CUDA_VISIBLE_DEVICES,
// models, peer access, the per-thread current device, planted faults. Each node test runs in a fresh
// process with its own environment (in_fresh_process).
#include <cmath>
#include <cstring>
#include <thread>

#include "tests/emulated_gpu/core/cost.h"
#include "tests/emulated_gpu/core/faults.h"
#include "tests/emulated_gpu/cudart/emu_test_support.h"

namespace {

// tests/fake_nvml/scenarios/mig.json's node: GPU 0 in MIG mode with two 3g.40gb instances, GPU 1 whole.
const char* kMigScenario = R"({"gpus": [{"mig": {"current": 1, "pending": 1, "instances": [
  {"uuid": "MIG-11111111-2222-4333-8444-555555555501", "gi": 1, "ci": 0, "sm_count": 60, "memory_mib": 40192, "gi_slices": 3},
  {"uuid": "MIG-11111111-2222-4333-8444-555555555502", "gi": 2, "ci": 0, "sm_count": 60, "memory_mib": 40192, "gi_slices": 3}]}},
  {}]})";

std::string name_of(int ordinal) {
  cudaDeviceProp p{};
  CHILD_CHECK(cudaGetDeviceProperties(&p, ordinal) == cudaSuccess);
  return p.name;
}

TEST(EmulatedNode, DefaultIsOneH100LikeTheFakeNvml) {
  emu_test::in_fresh_process([] {
    unsetenv("GPUSCALE_FAKE_NVML_SCENARIO");
    unsetenv("CUDA_VISIBLE_DEVICES");
    int n = 0;
    CHILD_CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n == 1);
    cudaDeviceProp p{};
    CHILD_CHECK(cudaGetDeviceProperties(&p, 0) == cudaSuccess);
    CHILD_CHECK(std::strcmp(p.name, "NVIDIA H100 80GB HBM3") == 0);
    CHILD_CHECK(p.totalGlobalMem == 85520809984ULL && p.multiProcessorCount == 132);
    CHILD_CHECK(p.major == 9 && p.minor == 0 && p.warpSize == 32 && p.maxThreadsPerBlock == 1024);
    // the fake NVML's default UUID GPU-00000000-0000-4000-8000-000000000010 and bus 00000000:18:00.0
    CHILD_CHECK(static_cast<unsigned char>(p.uuid.bytes[15]) == 0x10 && p.uuid.bytes[6] == 0x40);
    CHILD_CHECK(p.pciBusID == 0x18 && p.pciDeviceID == 0 && p.pciDomainID == 0);
    char bus[32];
    CHILD_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, 0) == cudaSuccess && std::string(bus) == "0000:18:00.0");
    int v = 0;
    CHILD_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess && v == 132);
    CHILD_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, 0) == cudaSuccess && v == 1980000);
    int rt = 0, drv = 0;
    CHILD_CHECK(cudaRuntimeGetVersion(&rt) == cudaSuccess && rt == 13000);
    // the fake NVML's default driver supports "CUDA 99.9" (nvmlSystemGetCudaDriverVersion 99990): the same node
    CHILD_CHECK(cudaDriverGetVersion(&drv) == cudaSuccess && drv == 99990);
    CHILD_CHECK(cudaSetDevice(1) == cudaErrorInvalidDevice);
  });
}

TEST(EmulatedNode, TwoGpusOneInMigModeGiveThreeDevices) {
  emu_test::in_fresh_process([] {
    emu_test::use_scenario("mig", kMigScenario);
    unsetenv("CUDA_VISIBLE_DEVICES");
    int n = 0;
    CHILD_CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n == 3);
    cudaDeviceProp p{};
    CHILD_CHECK(cudaGetDeviceProperties(&p, 0) == cudaSuccess);
    CHILD_CHECK(p.multiProcessorCount == 60 && p.totalGlobalMem == 40192ULL << 20);
    CHILD_CHECK(std::string(p.name) == "NVIDIA H100 80GB HBM3 MIG 3g.40gb");
    CHILD_CHECK(static_cast<unsigned char>(p.uuid.bytes[15]) == 0x01);  // MIG-...555555555501
    CHILD_CHECK(cudaGetDeviceProperties(&p, 2) == cudaSuccess && p.multiProcessorCount == 132);
    CHILD_CHECK(p.pciBusID == 0x28);  // the second GPU's default bus 00000000:28:00.0
    // MIG instances have no peer access, not even to the other, whole GPU
    int can = -1;
    CHILD_CHECK(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaSuccess && can == 0);
    CHILD_CHECK(cudaDeviceCanAccessPeer(&can, 0, 2) == cudaSuccess && can == 0);
    CHILD_CHECK(cudaSetDevice(2) == cudaSuccess);
    CHILD_CHECK(cudaDeviceEnablePeerAccess(0, 0) == cudaErrorPeerAccessUnsupported);
    // a MIG slice's bandwidth scales with its memory share (gpu_model.h)
    const auto& slice = gpuscale_emu::device(0).model;
    CHILD_CHECK(slice.hbm_gbps == 3350.0 * (40192.0 * 1048576.0) / 85520809984.0);
  });
}

TEST(EmulatedNode, PeerAccessBetweenWholeGpusEnablesOnce) {
  emu_test::in_fresh_process([] {
    emu_test::use_scenario("two", R"({"gpus": [{}, {}]})");
    unsetenv("CUDA_VISIBLE_DEVICES");
    int can = 0;
    CHILD_CHECK(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaSuccess && can == 1);
    CHILD_CHECK(cudaDeviceCanAccessPeer(&can, 1, 1) == cudaSuccess && can == 0);
    CHILD_CHECK(cudaSetDevice(0) == cudaSuccess);
    CHILD_CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    CHILD_CHECK(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessAlreadyEnabled);
    CHILD_CHECK(cudaGetLastError() == cudaErrorPeerAccessAlreadyEnabled);
    // a peer copy lands on the other GPU's memory and takes the NVLink time
    void *a = nullptr, *b = nullptr;
    CHILD_CHECK(cudaMalloc(&a, 1 << 20) == cudaSuccess);
    CHILD_CHECK(cudaSetDevice(1) == cudaSuccess && cudaMalloc(&b, 1 << 20) == cudaSuccess);
    std::memset(a, 7, 1 << 20);  // device memory is host memory here
    const double before = gpuscale_emu::stream_of(nullptr)->clock_us;
    CHILD_CHECK(cudaMemcpyPeerAsync(b, 1, a, 0, 1 << 20, nullptr) == cudaSuccess);
    CHILD_CHECK(static_cast<unsigned char*>(b)[(1 << 20) - 1] == 7);
    const auto& m = gpuscale_emu::device(0).model;
    const double us = (1 << 20) / (m.nvlink_gbps * m.link_efficiency * 1e3) + m.nvlink_latency_us;
    CHILD_CHECK(std::abs(gpuscale_emu::stream_of(nullptr)->clock_us -
                         std::max(before, gpuscale_emu::host_clock_us()) - us) < 1e-6);
    CHILD_CHECK(cudaMemcpyPeerAsync(b, 0, a, 0, 16, nullptr) == cudaErrorInvalidValue);  // b is not GPU 0's
  });
}

TEST(EmulatedNode, VisibleDevicesFilterReorderAndStopAtAnInvalidEntry) {
  emu_test::in_fresh_process([] {
    emu_test::use_scenario("four", R"({"gpus": [{}, {}, {"name": "NVIDIA H100 PCIe"}, {}]})");
    // 2, then a UUID prefix that all four GPUs share (...0010 to ...0013): not unique, so invalid, and
    // the list stops there (3 is not reached)
    setenv("CUDA_VISIBLE_DEVICES", "2,GPU-00000000-0000-4000-8000-00000000001,3", 1);
    int n = 0;
    CHILD_CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n == 1);
    CHILD_CHECK(name_of(0) == "NVIDIA H100 PCIe");
  });
  emu_test::in_fresh_process([] {
    emu_test::use_scenario("four", R"({"gpus": [{}, {}, {"name": "NVIDIA H100 PCIe"}, {}]})");
    setenv("CUDA_VISIBLE_DEVICES", "3,GPU-00000000-0000-4000-8000-000000000010,9,2", 1);
    int n = 0;
    CHILD_CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n == 2);
    cudaDeviceProp p{};
    CHILD_CHECK(cudaGetDeviceProperties(&p, 0) == cudaSuccess && p.pciBusID == 0x48);  // GPU 3
    CHILD_CHECK(cudaGetDeviceProperties(&p, 1) == cudaSuccess && p.pciBusID == 0x18);  // GPU 0
  });
  emu_test::in_fresh_process([] {
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    int n = -1;
    CHILD_CHECK(cudaGetDeviceCount(&n) == cudaErrorNoDevice && n == 0);
  });
}

TEST(EmulatedNode, ModelComesFromGpuscaleEmuGpu) {
  emu_test::in_fresh_process([] {
    unsetenv("GPUSCALE_FAKE_NVML_SCENARIO");
    unsetenv("CUDA_VISIBLE_DEVICES");
    setenv("GPUSCALE_EMU_GPU", "h200", 1);
    CHILD_CHECK(name_of(0) == "NVIDIA H200");
    size_t free = 0, total = 0;
    CHILD_CHECK(cudaMemGetInfo(&free, &total) == cudaSuccess && total == 143771ULL << 20);
    CHILD_CHECK(gpuscale_emu::device(0).model.hbm_gbps == 4800);
  });
  EXPECT_EQ(gpuscale_emu::gpu_model("h100-pcie").sm_count, 114);
  EXPECT_EQ(gpuscale_emu::gpu_model("h100-pcie").nvlink_gbps, 0);
  EXPECT_EQ(gpuscale_emu::gpu_model("h200").tflops.at("bf16"), 989.5);
  EXPECT_EQ(gpuscale_emu::gpu_model("h100-sxm").tflops.at("fp8_e5m2"), 1979);
  EXPECT_THROW(gpuscale_emu::gpu_model("a100"), std::invalid_argument);
}

TEST(EmulatedNode, CurrentDeviceIsPerHostThread) {
  emu_test::in_fresh_process([] {
    emu_test::use_scenario("two", R"({"gpus": [{}, {}]})");
    unsetenv("CUDA_VISIBLE_DEVICES");
    CHILD_CHECK(cudaSetDevice(1) == cudaSuccess);
    int other = -1;
    std::thread t([&] { cudaGetDevice(&other); });
    t.join();
    int mine = -1;
    CHILD_CHECK(cudaGetDevice(&mine) == cudaSuccess && mine == 1);
    CHILD_CHECK(other == 0);  // "the current device is 0 until set", per thread
  });
}

TEST(EmulatedNode, StickyFaultFiresOnTheNthLaunchAndStays) {
  emu_test::in_fresh_process([] {
    unsetenv("GPUSCALE_FAKE_NVML_SCENARIO");
    unsetenv("CUDA_VISIBLE_DEVICES");
    setenv("GPUSCALE_EMU_FAULTS", "sticky:0:3", 1);
    float* x = nullptr;
    CHILD_CHECK(cudaMalloc(reinterpret_cast<void**>(&x), 64 * sizeof(float)) == cudaSuccess);
    for (int i = 0; i < 64; ++i) x[i] = 1;
    CHILD_CHECK(emu_test::launch_scale(x, 64, dim3(1), dim3(64), nullptr) == cudaSuccess);
    CHILD_CHECK(emu_test::launch_scale(x, 64, dim3(1), dim3(64), nullptr) == cudaSuccess);
    // the third launch faults asynchronously: the launch itself succeeds, its work does not happen
    CHILD_CHECK(emu_test::launch_scale(x, 64, dim3(1), dim3(64), nullptr) == cudaSuccess);
    CHILD_CHECK(x[0] == 4);
    CHILD_CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    CHILD_CHECK(cudaGetLastError() == cudaErrorIllegalAddress);
    CHILD_CHECK(cudaGetLastError() == cudaErrorIllegalAddress);  // sticky: not cleared
    void* p = nullptr;
    CHILD_CHECK(cudaMalloc(&p, 16) == cudaErrorIllegalAddress);
  });
}

TEST(EmulatedNode, SlowGpuAndSlowHbmMultiplyTheirDurations) {
  emu_test::in_fresh_process([] {
    emu_test::use_scenario("two", R"({"gpus": [{}, {}]})");
    unsetenv("CUDA_VISIBLE_DEVICES");
    setenv("GPUSCALE_EMU_FAULTS", "slow-gpu:1:3,slow-hbm:GPU-00000000-0000-4000-8000-000000000010:2", 1);
    const size_t bytes = 32 << 20;
    double elapsed[2];
    for (int dev = 0; dev < 2; ++dev) {
      CHILD_CHECK(cudaSetDevice(dev) == cudaSuccess);
      void *a = nullptr, *b = nullptr;
      CHILD_CHECK(cudaMalloc(&a, bytes) == cudaSuccess && cudaMalloc(&b, bytes) == cudaSuccess);
      cudaEvent_t e0, e1;
      cudaEventCreate(&e0);
      cudaEventCreate(&e1);
      CHILD_CHECK(cudaDeviceSynchronize() == cudaSuccess);
      cudaEventRecord(e0, nullptr);
      CHILD_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, nullptr) == cudaSuccess);
      cudaEventRecord(e1, nullptr);
      cudaEventSynchronize(e1);
      float ms = 0;
      CHILD_CHECK(cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess);
      elapsed[dev] = ms * 1000.0 - gpuscale_emu::device(dev).model.launch_overhead_us;
    }
    const double d2d = gpuscale_emu::copy_us(bytes, gpuscale_emu::CopyKind::device_to_device, gpuscale_emu::device(0));
    CHILD_CHECK(std::abs(elapsed[0] - 2 * d2d) < 1e-3);  // slow-hbm x2 on GPU 0 (a memory-kind copy)
    CHILD_CHECK(std::abs(elapsed[1] - 3 * d2d) < 1e-3);  // slow-gpu x3 on GPU 1
  });
}

TEST(EmulatedFaults, ParserReadsEveryKindAndRefusesUnknownOnes) {
  const auto f = gpuscale_emu::parse_faults(
      "slow-gpu:0:2.5, slow-link:GPU-abc:4,flip-gemm:1:10,hang-collective:0:3,slow-nic:1:2,sticky:MIG-x:5");
  ASSERT_EQ(f.size(), 6u);
  EXPECT_EQ(f[0].kind, "slow-gpu");
  EXPECT_EQ(f[0].factor, 2.5);
  EXPECT_EQ(f[1].target, "GPU-abc");
  EXPECT_EQ(f[2].count, 10);
  EXPECT_EQ(f[5].count, 5);
  try {
    gpuscale_emu::parse_faults("slow-gpu:0:2,melt:0:1");
    FAIL() << "an unknown kind must throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown kind 'melt'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("slow-gpu, slow-hbm, sticky, slow-link, slow-nic, flip-gemm, hang-collective"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(gpuscale_emu::parse_faults("slow-gpu:0:-1"), std::invalid_argument);
  EXPECT_THROW(gpuscale_emu::parse_faults("sticky:0:0"), std::invalid_argument);
  EXPECT_THROW(gpuscale_emu::parse_faults("slow-gpu:0"), std::invalid_argument);
}

// HOST/ID targets act only in the processes standing for HOST (core/faults.h): the world rank picks
// this process's name from GPUSCALE_TEST_HOSTS, as world/test_hosts.h does.
TEST(EmulatedFaults, AHostQualifiedTargetActsOnlyOnThatTestHost) {
  ::setenv("GPUSCALE_TEST_HOSTS", "h0,h0,h1,h1", 1);
  const auto f = gpuscale_emu::parse_faults("slow-gpu:h1/1:2");
  ASSERT_EQ(f.size(), 1u);
  for (int rank = 0; rank < 4; ++rank) {
    ::setenv("OMPI_COMM_WORLD_RANK", std::to_string(rank).c_str(), 1);
    EXPECT_EQ(gpuscale_emu::this_test_host(), rank < 2 ? "h0" : "h1");
    EXPECT_EQ(gpuscale_emu::fault_targets(f[0], 1, "GPU-x"), rank >= 2) << rank;
    EXPECT_FALSE(gpuscale_emu::fault_targets(f[0], 0, "GPU-y")) << rank;
  }
  std::string id;
  EXPECT_TRUE(gpuscale_emu::target_here("GPU-z", id));
  EXPECT_EQ(id, "GPU-z");
  ::unsetenv("GPUSCALE_TEST_HOSTS");
  ::unsetenv("OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(gpuscale_emu::this_test_host(), "");
  EXPECT_FALSE(gpuscale_emu::target_here("h1/1", id));
}

TEST(EmulatedFaults, NoiseIsSeededAndLogNormal) {
  const auto n = gpuscale_emu::parse_noise("rep=0.01,gpu=0.02,run=0.0", 42);
  EXPECT_EQ(n.rep, 0.01);
  EXPECT_EQ(n.gpu, 0.02);
  EXPECT_EQ(n.run, 0.0);
  EXPECT_THROW(gpuscale_emu::parse_noise("bogus=1", 1), std::invalid_argument);
  const auto key = gpuscale_emu::noise_key(42, "gpu/GPU-0");
  EXPECT_EQ(gpuscale_emu::noise_factor(0.02, key), gpuscale_emu::noise_factor(0.02, key));  // deterministic
  EXPECT_NE(gpuscale_emu::noise_factor(0.02, key), gpuscale_emu::noise_factor(0.02, gpuscale_emu::noise_key(43, "gpu/GPU-0")));
  EXPECT_EQ(gpuscale_emu::noise_factor(0, key), 1.0);
  // log-normal: the logs of many draws have the sigma asked for
  double sum = 0, sum2 = 0;
  const int draws = 20000;
  for (int i = 0; i < draws; ++i) {
    const double l = std::log(gpuscale_emu::noise_factor(0.05, gpuscale_emu::noise_key(7, std::to_string(i))));
    sum += l;
    sum2 += l * l;
  }
  const double mean = sum / draws, sd = std::sqrt(sum2 / draws - mean * mean);
  EXPECT_NEAR(mean, 0, 0.002);
  EXPECT_NEAR(sd, 0.05, 0.002);
}

}  // namespace
