// The runner's telemetry hook (health/run_telemetry.h) as a CUDA rank will use it: the rank's device
// describes its GPU by UUID or PCI bus id (as the CUDA backend records them), and the hook must find
// that GPU, or that MIG device, among the fake NVML's; watch windows; and judge the run. A world of one
// rank (MPI singleton, no launcher).
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/timed_span.h"
#include "health/run_telemetry.h"

namespace gpuscale::health {
namespace {

World& world() {
  static World w(nullptr, nullptr);
  return w;
}

DeviceInfo cuda_device(nlohmann::json details) {
  DeviceInfo d;
  d.backend = "cuda";
  d.name = "NVIDIA H100 80GB HBM3";
  d.details = std::move(details);
  return d;
}

std::unique_ptr<RunTelemetry> open_with(const std::string& scenario, const DeviceInfo& device,
                                        const nlohmann::json& software = {{"cuda_runtime", "12.4"}}) {
  setenv("GPUSCALE_FAKE_NVML_SCENARIO", (std::string(FAKE_NVML_SCENARIOS) + "/" + scenario + ".json").c_str(), 1);
  TelemetryOptions o;
  o.nvml_library = FAKE_NVML_LIBRARY;
  o.interval = std::chrono::seconds(60);
  return RunTelemetry::open(o, world(), device, software);
}

TEST(HealthRunHook, FindsTheRanksGpuByUuidOrBusId) {
  {
    auto t = open_with("healthy", cuda_device({{"uuid", "GPU-00000000-0000-4000-8000-000000000011"}}));
    ASSERT_TRUE(t->available()) << t->identity().dump();
    const auto id = t->identity();
    EXPECT_EQ(id["gpu"]["index"], 1);
    EXPECT_EQ(id["matched_by"], "uuid GPU-00000000-0000-4000-8000-000000000011");
    EXPECT_EQ(id["software"]["runtime_cuda"], "12.4");
    EXPECT_EQ(id["software"]["driver"], "999.99.99");
  }
  {
    auto t = open_with("healthy", cuda_device({{"uuid", "GPU-ffffffff"}, {"pci_bus_id", "0000:18:00.0"}}));
    ASSERT_TRUE(t->available());
    EXPECT_EQ(t->identity()["gpu"]["index"], 0);
  }
  {
    auto t = open_with("healthy", cuda_device({{"uuid", "GPU-ffffffff"}}));
    EXPECT_FALSE(t->available());
    EXPECT_EQ(t->identity()["reason"], "no NVML GPU has uuid 'GPU-ffffffff' or PCI bus id ''");
  }
  {
    DeviceInfo cpu;
    cpu.backend = "cpu";
    auto t = open_with("healthy", cpu);
    EXPECT_FALSE(t->available());
    EXPECT_EQ(t->identity()["reason"], "the CPU backend has no GPU");
  }
  unsetenv("GPUSCALE_FAKE_NVML_SCENARIO");
}

TEST(HealthRunHook, AMigRankWatchesItsGpuAndSaysWhichPeaksApply) {
  auto t = open_with("mig", cuda_device({{"uuid", "MIG-11111111-2222-4333-8444-555555555502"}}));
  ASSERT_TRUE(t->available());
  const auto id = t->identity();
  EXPECT_EQ(id["gpu"]["index"], 0);  // the GPU the MIG device is part of
  EXPECT_EQ(id["mig"]["uuid"], "MIG-11111111-2222-4333-8444-555555555502");
  EXPECT_EQ(id["mig"]["gpu_instance_id"], 2);
  EXPECT_EQ(id["mig"]["peaks"]["applies"], "slice share");
  EXPECT_NEAR(id["mig"]["peaks"]["compute_fraction"].get<double>(), 60.0 / 132, 1e-12);
  EXPECT_EQ(id["gpu"]["mig_instances"].size(), 2u);
  unsetenv("GPUSCALE_FAKE_NVML_SCENARIO");
}

TEST(HealthRunHook, WindowsFeedRowsAndTheRunsVerdict) {
  // thermal_midrun: GPU 0 throttles from its 4th reading (1: identity, 2-3: first window).
  auto t = open_with("thermal_midrun", cuda_device({{"uuid", "GPU-00000000-0000-4000-8000-000000000010"}}));
  ASSERT_TRUE(t->available());
  nlohmann::json first, second, failed;
  {
    auto w = t->watch();
    t->attach(w, first);
  }
  {
    auto w = t->watch();
    t->attach(w, second);
  }
  {
    auto w = t->watch();  // a point that throws: the window ends with it, nothing attached
  }
  EXPECT_FALSE(first["telemetry"]["throttled"].get<bool>());
  EXPECT_EQ(first["telemetry"]["samples"], 2);
  EXPECT_TRUE(second["telemetry"]["throttled"].get<bool>());
  EXPECT_EQ(second["telemetry"]["throttle_reasons"], nlohmann::json({"HW_THERMAL"}));
  EXPECT_TRUE(failed.is_null());

  nlohmann::json ranks = nlohmann::json::array({{{"rank", 0}, {"host", world().host()}, {"device", {{"name", "x"}}},
                                                 {"telemetry", t->identity()}}});
  const auto health = t->finish(world(), ranks);
  ASSERT_EQ(health["gpus"].size(), 1u);
  const auto& g = health["gpus"][0];
  EXPECT_EQ(g["verdict"], "FAIL");
  EXPECT_EQ(g["summary"]["samples"], 6);  // the third window counts for the run too
  EXPECT_NE(g["line"].get<std::string>().find("HW_THERMAL clock event"), std::string::npos) << g["line"];
  EXPECT_EQ(g["line"].get<std::string>().find("CUDA runtime"), std::string::npos) << g["line"];
  EXPECT_EQ(health["telemetry"], "available");
  EXPECT_EQ(health["verdict"], "FAIL");
  unsetenv("GPUSCALE_FAKE_NVML_SCENARIO");
}

// A point's energy is read around its timed repetitions (core/timed_span.h), where the driver opened
// them: the window says which it covers; a driver that opened none leaves the whole point's.
TEST(HealthRunHook, EnergyIsTheTimedSpansWhereTheDriverOpenedThem) {
  auto t = open_with("healthy", cuda_device({{"uuid", "GPU-00000000-0000-4000-8000-000000000010"}}));
  ASSERT_TRUE(t->available());
  nlohmann::json timed, whole;
  {
    auto w = t->watch();
    { TimedSpan rep; }
    { TimedSpan rep; }
    t->attach(w, timed);
  }
  {
    auto w = t->watch();
    t->attach(w, whole);
  }
  { TimedSpan outside; }  // no window: nothing listens
  EXPECT_EQ(timed["energy"].value("window", ""), "timed") << timed["energy"].dump();
  EXPECT_EQ(timed["energy"].value("spans", 0), 2) << timed["energy"].dump();
  EXPECT_TRUE(timed["energy"]["energy_j"].is_number()) << timed["energy"].dump();
  EXPECT_EQ(whole["energy"].value("window", ""), "point") << whole["energy"].dump();
  // The row says what its energy covers.
  ResultRow row;
  row.unit = "GB/s";
  RankValue r;
  r.metrics["energy"] = timed["energy"];
  row.ranks = {r};
  add_row_energy(row);
  EXPECT_EQ(row.metrics["energy_window"], "timed");
  unsetenv("GPUSCALE_FAKE_NVML_SCENARIO");
}

TEST(HealthRunHook, ARuntimeNewerThanTheDriverFailsTheRanksGpu) {
  // driver 535 supports CUDA 12.2; the backend's runtime is 12.4: the software check joins the verdict
  auto t = open_with("old_driver", cuda_device({{"uuid", "GPU-00000000-0000-4000-8000-000000000010"}}),
                     {{"driver", "12.2"}, {"cuda_runtime", "12.4"}});
  ASSERT_TRUE(t->available());
  nlohmann::json ranks = nlohmann::json::array({{{"rank", 0}, {"host", world().host()}, {"device", {{"name", "x"}}},
                                                 {"telemetry", t->identity()}}});
  const auto health = t->finish(world(), ranks);
  ASSERT_EQ(health["gpus"].size(), 1u);
  EXPECT_EQ(health["gpus"][0]["verdict"], "FAIL");
  EXPECT_NE(health["gpus"][0]["line"].get<std::string>().find(
                "driver 535.104.05 supports CUDA 12.2, older than the CUDA runtime 12.4"),
            std::string::npos)
      << health["gpus"][0]["line"];
  unsetenv("GPUSCALE_FAKE_NVML_SCENARIO");
}

}  // namespace
}  // namespace gpuscale::health
