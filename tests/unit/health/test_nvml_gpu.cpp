// NVML through gpuscale's own dlopen path, against the fake NVML of tests/fake_nvml: a missing library,
// a library lacking symbols, NOT_SUPPORTED / NO_PERMISSION fields, scenario states read back
// field by field, the telemetry session's windows and sampler, and the node check end to end (with
// the CPU device standing in for a GPU backend so the bandwidth and GEMM checks run).
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "health/health_check.h"
#include "health/nvml/nvml_gpu.h"
#include "health/perf_probe.h"
#include "health/telemetry.h"
#include "kernels/cpu/cpu_device.h"

namespace gpuscale::health {
namespace {

std::string scenario(const std::string& name) { return std::string(FAKE_NVML_SCENARIOS) + "/" + name + ".json"; }

class FakeNvml : public ::testing::Test {
 protected:
  void use(const std::string& name) { setenv("GPUSCALE_FAKE_NVML_SCENARIO", scenario(name).c_str(), 1); }
  void TearDown() override { unsetenv("GPUSCALE_FAKE_NVML_SCENARIO"); }
};

TEST_F(FakeNvml, MissingLibraryIsUnavailableNeverAnError) {
  auto lib = NvmlLibrary::open("/no/such/libnvidia-ml.so.1");
  EXPECT_FALSE(lib->available());
  EXPECT_NE(lib->why_unavailable().find("/no/such/libnvidia-ml.so.1 cannot be loaded"), std::string::npos);
  const auto node = enumerate_gpus(lib);
  EXPECT_TRUE(node.gpus.empty());
  EXPECT_EQ(node.why_none, lib->why_unavailable());
}

TEST_F(FakeNvml, EnvironmentVariableNamesTheLibraryAndTheFlagWins) {
  setenv(kNvmlLibraryEnv, FAKE_NVML_LIBRARY, 1);
  EXPECT_EQ(NvmlLibrary::open("")->path(), FAKE_NVML_LIBRARY);
  EXPECT_EQ(NvmlLibrary::open("/other.so")->path(), "/other.so");
  unsetenv(kNvmlLibraryEnv);
  EXPECT_EQ(NvmlLibrary::open("")->path(), kNvmlDefaultLibrary);
}

TEST_F(FakeNvml, HealthyGpuReadsBackEveryField) {
  use("healthy");
  auto lib = NvmlLibrary::open(FAKE_NVML_LIBRARY);
  ASSERT_TRUE(lib->available()) << lib->why_unavailable();
  EXPECT_TRUE(lib->missing_symbols().empty());
  const auto node = enumerate_gpus(lib);
  ASSERT_EQ(node.gpus.size(), 2u);
  EXPECT_EQ(node.system.driver_version, "999.99.99");
  EXPECT_EQ(node.system.cuda_driver_version, 99990);
  const auto id = node.gpus[1].identity();
  EXPECT_EQ(id.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(id.pci_bus_id, "00000000:28:00.0");
  EXPECT_EQ(id.pci_device_id, "0x2330");
  EXPECT_EQ(id.compute_capability, "9.0");
  EXPECT_EQ(id.max_sm_clock_mhz, 1980u);
  EXPECT_EQ(id.power_limit_w, 700.0);
  EXPECT_EQ(id.ecc_enabled, true);
  EXPECT_EQ(id.pcie_max_width, 16u);
  EXPECT_EQ(id.nvlink_links, 18u);
  EXPECT_EQ(id.compute_mode, "default");
  EXPECT_TRUE(id.errors.empty());
  const auto s = node.gpus[1].sample(1.0);
  EXPECT_EQ(s.sm_clock_mhz, 1980u);
  EXPECT_EQ(s.power_w, 350.0);
  EXPECT_EQ(s.clock_events, 0u);
  const auto c = node.gpus[1].counters();
  EXPECT_EQ(c.ecc_uncorrected_volatile, 0u);
  EXPECT_EQ(c.ecc_corrected_aggregate, 3u);
  EXPECT_EQ(c.remap_pending, false);
  EXPECT_EQ(c.nvlink_up.size(), 18u);
  ASSERT_TRUE(c.processes);
  EXPECT_TRUE(c.processes->empty());
}

TEST_F(FakeNvml, UnsupportedAndNoPermissionFieldsAreMarkedAndTheRestGoesOn) {
  use("not_supported");
  auto lib = NvmlLibrary::open(FAKE_NVML_LIBRARY);
  const auto node = enumerate_gpus(lib);
  ASSERT_EQ(node.gpus.size(), 1u);
  const auto id = node.gpus[0].identity();
  EXPECT_FALSE(id.serial);
  EXPECT_NE(id.unsupported.at("serial").find("NVML_ERROR_NOT_SUPPORTED"), std::string::npos);
  EXPECT_NE(id.unsupported.at("power_w").find("nvmlDeviceGetPowerUsage"), std::string::npos);
  EXPECT_NE(id.unsupported.at("processes").find("NVML_ERROR_NO_PERMISSION"), std::string::npos);
  EXPECT_TRUE(id.unsupported.count("ecc_counts"));
  EXPECT_TRUE(id.unsupported.count("nvlink"));
  EXPECT_TRUE(id.errors.empty());
  EXPECT_EQ(id.name, "NVIDIA GeForce RTX 4090");  // the rest was read
  EXPECT_EQ(id.max_sm_clock_mhz, 1980u);
  const auto s = node.gpus[0].sample(0);
  EXPECT_FALSE(s.power_w);
  EXPECT_EQ(s.temperature_c, 45u);
}

TEST_F(FakeNvml, MissingSymbolsAreUnsupportedAndOlderNamesAreUsed) {
  use("thermal");
  auto lib = NvmlLibrary::open(FAKE_NVML_MISSING_LIBRARY);
  ASSERT_TRUE(lib->available());
  EXPECT_EQ(lib->missing_symbols(),
            (std::vector<std::string>{"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetRemappedRows"}));
  const auto node = enumerate_gpus(lib);
  const auto id = node.gpus[1].identity();
  EXPECT_EQ(id.unsupported.at("row_remap"), "nvmlDeviceGetRemappedRows is missing from the NVML library");
  // clock event reasons through nvmlDeviceGetCurrentClocksThrottleReasons: the throttling is still seen
  const auto s = node.gpus[1].sample(0);
  EXPECT_EQ(s.clock_events, 0x60u);
}

TEST_F(FakeNvml, DriverLibraryMismatchIsReportedByInit) {
  use("version_mismatch");
  auto lib = NvmlLibrary::open(FAKE_NVML_LIBRARY);
  EXPECT_FALSE(lib->available());
  EXPECT_EQ(lib->init_result(), nvml::NVML_ERROR_LIB_RM_VERSION_MISMATCH);
  EXPECT_NE(lib->why_unavailable().find("NVML_ERROR_LIB_RM_VERSION_MISMATCH"), std::string::npos);
}

TEST_F(FakeNvml, SessionWindowsSeeThePhasesAndXidEvents) {
  // NVML counts its initialisations: each part's library goes (nvmlShutdown) before the next scenario.
  {
    use("thermal_midrun");
    auto lib = NvmlLibrary::open(FAKE_NVML_LIBRARY);
    auto node = enumerate_gpus(lib);
    TelemetrySession s(lib, {node.gpus[0]}, std::chrono::seconds(60), 90);  // reading 1: the identity
    s.begin();                                                                // 2
    auto w1 = s.end();                                                        // 3
    ASSERT_EQ(w1.size(), 1u);
    EXPECT_EQ(w1[0].samples(), 2u);
    EXPECT_EQ(w1[0].clock_events(), 0u);
    s.begin();  // 4: the scenario's thermal phase starts
    auto w2 = s.end();
    EXPECT_EQ(w2[0].clock_events(), 0x40u);
    EXPECT_EQ(w2[0].sm_clock_min(), 1000u);
    EXPECT_EQ(s.totals()[0].samples(), 4u);
    EXPECT_EQ(s.totals()[0].clock_events(), 0x40u);
    EXPECT_EQ(s.ticks(), 0u);  // no sample within a 60 s period
  }
  use("xid79");
  auto lib2 = NvmlLibrary::open(FAKE_NVML_LIBRARY);
  auto node2 = enumerate_gpus(lib2);
  TelemetrySession x(lib2, node2.gpus, std::chrono::seconds(60), 90);
  EXPECT_EQ(x.xid_unsupported(), "");
  x.begin();
  const auto w = x.end();
  EXPECT_TRUE(w[0].xids().empty());
  ASSERT_EQ(w[1].xids().size(), 1u);
  EXPECT_EQ(w[1].xids()[0].xid, 79u);
}

TEST_F(FakeNvml, SamplerTicksAtItsPeriodAndStopsAtOnce) {
  use("healthy");
  auto lib = NvmlLibrary::open(FAKE_NVML_LIBRARY);
  auto node = enumerate_gpus(lib);
  // The sampler runs at SCHED_IDLE, so on a machine whose cores are all busy it may barely run: a
  // session too starved for 5 ticks is tried again, longer (one that never ticks fails every try).
  for (const auto ms : {500, 2000, 8000}) {
    TelemetrySession s(lib, node.gpus, std::chrono::milliseconds(5), 90);
    const auto start = std::chrono::steady_clock::now();
    s.begin();
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    const auto w = s.end();
    const auto stopped = std::chrono::steady_clock::now();
    // ~ms/5 expected; a loaded machine delays ticks and skips late ones, it never bursts
    EXPECT_LE(s.ticks(), static_cast<std::size_t>((stopped - start) / std::chrono::milliseconds(5)) + 1);
    EXPECT_EQ(w[0].samples(), s.ticks() + 2);
    if (s.ticks() < 5u && ms < 8000) continue;
    EXPECT_GE(s.ticks(), 5u);
    EXPECT_GT(s.seconds_per_tick(), 0.0);
    break;
  }
  // At once: end() does not wait out the sampler's period. With a period of a minute, a wait would take
  // that minute; half of it is a bound no loaded machine reaches (a bound of a second could be).
  TelemetrySession slow(lib, node.gpus, std::chrono::seconds(60), 90);
  slow.begin();
  const auto t0 = std::chrono::steady_clock::now();
  slow.end();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
}

// A CPU device standing in for a GPU backend: the perf checks run for real and are judged.
class CpuAsGpus final : public LocalGpus {
 public:
  explicit CpuAsGpus(std::vector<std::string> uuids) : uuids_(std::move(uuids)) {}
  std::vector<std::string> uuids() const override { return uuids_; }
  std::unique_ptr<Device> open(int) override { return make_cpu_device({1, 1}); }
  const PeakTable* peaks() const override { return &table_; }
  // the driver library matches old_driver.json's kernel driver (CUDA 12.2); the runtime is newer
  nlohmann::json software() const override { return {{"driver", "12.2"}, {"cuda_runtime", "12.8"}, {"nccl", "2.21.5"}}; }

 private:
  // Peaks a CPU core cannot reach: the checks must come out as failures, not passes.
  struct Table final : PeakTable {
    ExpectedPeak memory_bandwidth(const DeviceInfo&) const override { return {1e6, "test: 1 PB/s"}; }
    ExpectedPeak compute(const DeviceInfo&, DType) const override { return {1e6, "test: 1 EFLOP/s"}; }
  } table_;
  std::vector<std::string> uuids_;
};

TEST_F(FakeNvml, NodeCheckRunsPerfOnMatchedGpusAndJudgesVersions) {
  use("old_driver");
  HealthOptions o;
  o.telemetry.nvml_library = FAKE_NVML_LIBRARY;
  o.perf_options.array_bytes = 1 << 20;
  o.perf_options.gemm_shape = {64, 64, 64};
  o.perf_options.reps = 3;
  CpuAsGpus gpus({"GPU-00000000-0000-4000-8000-000000000011"});  // NVML's GPU 1
  const auto r = run_health_check(o, &gpus, "");
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_FALSE(r.gpus[0].cuda_ordinal);
  EXPECT_EQ(r.gpus[1].cuda_ordinal, 0);
  ASSERT_EQ(r.gpus[1].perf.size(), 2u);
  for (const auto& p : r.gpus[1].perf) {
    EXPECT_TRUE(p.ran && p.valid && p.value && *p.value > 0) << p.what << ": " << p.error;
  }
  EXPECT_EQ(r.gpus[1].verdict.severity, Severity::fail);  // far below the (absurd) peaks
  // driver 535 supports CUDA 12.2, the runtime is 12.8: every GPU fails on it
  EXPECT_NE(r.gpus[0].verdict.line().find("driver 535.104.05 supports CUDA 12.2, older than the CUDA runtime 12.8"),
            std::string::npos)
      << r.gpus[0].verdict.line();
  EXPECT_EQ(r.exit_code, kHealthFail);
  bool noted = false;
  for (const auto& n : r.gpus[0].verdict.notes) noted |= n.find("the GPU backend cannot see this GPU") != std::string::npos;
  EXPECT_TRUE(noted);
  const auto doc = report_json(r);
  EXPECT_EQ(doc["gpus"][1]["perf"][0]["check"], "memory_bandwidth");
  EXPECT_EQ(doc["lines"].size(), 2u);
}

TEST_F(FakeNvml, ARuntimeThatSeesNoGpuStillChecksTheDriverVersion) {
  // The CUDA runtime answers cudaErrorInsufficientDriver and sees no GPU: NVML's GPUs are checked, the
  // perf checks say why they did not run, and the driver (CUDA 12.2) is too old for the runtime (12.8).
  use("old_driver");
  HealthOptions o;
  o.telemetry.nvml_library = FAKE_NVML_LIBRARY;
  CpuAsGpus none({});
  const auto r = run_health_check(o, &none, "the CUDA runtime sees no GPU: cudaErrorInsufficientDriver");
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.exit_code, kHealthFail);
  EXPECT_FALSE(r.gpus[0].perf[0].ran);
  EXPECT_NE(r.gpus[0].verdict.line().find("driver 535.104.05 supports CUDA 12.2, older than the CUDA runtime 12.8"),
            std::string::npos)
      << r.gpus[0].verdict.line();
}

TEST_F(FakeNvml, NoGpuIsItsOwnExitCode) {
  use("driver_not_loaded");
  HealthOptions o;
  o.telemetry.nvml_library = FAKE_NVML_LIBRARY;
  const auto r = run_health_check(o, nullptr, "no CUDA backend");
  EXPECT_EQ(r.exit_code, kHealthNoGpu);
  const auto lines = report_lines(r);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("NVML_ERROR_DRIVER_NOT_LOADED"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("no CUDA backend"), std::string::npos);
}

}  // namespace
}  // namespace gpuscale::health
