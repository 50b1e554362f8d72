// The verdict rules (health/verdict.h) on hand-built observations: each DCGM failure class fails, the
// softer checks warn, what cannot be judged is a note, and the thresholds file changes the outcome.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <random>

#include "test_seed.h"

#include "health/clock_events.h"
#include "health/observation.h"
#include "health/thresholds.h"
#include "health/verdict.h"

namespace gpuscale::health {
namespace {

GpuIdentity h100() {
  GpuIdentity g;
  g.index = 0;
  g.name = "NVIDIA H100 80GB HBM3";
  g.uuid = "GPU-0";
  g.max_sm_clock_mhz = 1980;
  g.pcie_max_gen = 5;
  g.pcie_max_width = 16;
  g.ecc_enabled = true;
  g.persistence_mode = true;
  g.compute_mode = "default";
  return g;
}

GpuSample busy(unsigned sm = 1980, std::uint64_t events = 0) {
  GpuSample s;
  s.sm_clock_mhz = sm;
  s.temperature_c = 60;
  s.power_w = 600;
  s.gpu_util_percent = 100;
  s.clock_events = events;
  s.pcie_gen = 5;
  s.pcie_width = 16;
  return s;
}

GpuCounters clean() {
  GpuCounters c;
  c.ecc_uncorrected_volatile = 0;
  c.ecc_corrected_volatile = 0;
  c.remap_pending = false;
  c.remap_failed = false;
  c.pcie_replays = 0;
  c.processes = std::vector<GpuProcess>{};
  return c;
}

// A window: counters `a`, samples, counters `b`.
Observation window(const GpuCounters& a, const std::vector<GpuSample>& samples, const GpuCounters& b) {
  Observation o;
  o.add(a);
  for (const auto& s : samples) o.add(s);
  o.add(b);
  return o;
}

Verdict judge(const GpuIdentity& g, const Observation& o, const Thresholds& t = builtin_thresholds()) {
  return judge_gpu({g, o, {}, {}}, t);
}

bool has(const Verdict& v, const std::string& check, Severity s) {
  for (const auto& f : v.findings)
    if (f.check == check && f.severity == s) return true;
  return false;
}

TEST(HealthVerdict, SteadyHealthyGpuPasses) {
  const auto v = judge(h100(), window(clean(), {busy(), busy(1965), busy()}, clean()));
  EXPECT_EQ(v.severity, Severity::pass) << v.line();
  EXPECT_TRUE(v.findings.empty());
  EXPECT_EQ(v.line(), "PASS");
}

TEST(HealthVerdict, DcgmClockEventClassesFailAndPowerCapDoesNot) {
  for (const char* name : {"HW_SLOWDOWN", "SW_THERMAL", "HW_THERMAL", "HW_POWER_BRAKE"}) {
    const auto v = judge(h100(), window(clean(), {busy(), busy(1980, *clock_event_bit(name))}, clean()));
    EXPECT_EQ(v.severity, Severity::fail) << name;
    ASSERT_FALSE(v.findings.empty());
    EXPECT_NE(v.findings.front().message.find(name), std::string::npos) << v.line();
  }
  const auto capped = judge(h100(), window(clean(), {busy(1800, *clock_event_bit("SW_POWER_CAP"))}, clean()));
  EXPECT_EQ(capped.severity, Severity::pass) << capped.line();
}

TEST(HealthVerdict, ThrottleReasonsFlagOnlyJudgedEvents) {
  const auto& t = builtin_thresholds();
  EXPECT_TRUE(throttle_reasons(0x4 | 0x1, t).empty());  // power cap and idle: not throttling by the rules
  EXPECT_EQ(throttle_reasons(0x40 | 0x4, t), std::vector<std::string>{"HW_THERMAL"});
  Observation o;
  o.add(busy(1000, 0x40));
  const auto j = point_summary(o, t);
  EXPECT_TRUE(j["throttled"].get<bool>());
  EXPECT_EQ(j["throttle_reasons"][0], "HW_THERMAL");
  EXPECT_EQ(j["sm_clock_mhz"]["min"], 1000);
}

TEST(HealthVerdict, ARowRecordsItsPeakDeviceMemory) {
  std::mt19937_64 rng(test_seed());
  Observation o, later;
  std::uint64_t peak = 0;
  for (int i = 0; i < 5; ++i) {
    auto s = busy();
    s.memory_used_bytes = rng() % (141ULL << 30);
    peak = std::max(peak, *s.memory_used_bytes);
    (i < 3 ? o : later).add(s);
  }
  auto unread = busy();  // a sample whose memory NVML did not give: not a zero
  o.add(unread);
  o.merge(later);
  EXPECT_EQ(point_summary(o, builtin_thresholds())["memory_used_max_bytes"], peak);
  Observation none;
  none.add(busy());
  EXPECT_TRUE(point_summary(none, builtin_thresholds())["memory_used_max_bytes"].is_null());
}

TEST(HealthVerdict, UncorrectedEccIncreaseFails) {
  auto b = clean();
  b.ecc_uncorrected_volatile = 2;
  const auto v = judge(h100(), window(clean(), {busy()}, b));
  EXPECT_EQ(v.severity, Severity::fail);
  EXPECT_TRUE(has(v, "ecc", Severity::fail));
  EXPECT_NE(v.line().find("uncorrected ECC errors +2"), std::string::npos) << v.line();
}

TEST(HealthVerdict, UncorrectedEccSinceBootFailsCorrectedIncreaseWarnsAboveThreshold) {
  auto a = clean(), b = clean();
  a.ecc_uncorrected_volatile = b.ecc_uncorrected_volatile = 1;
  EXPECT_TRUE(has(judge(h100(), window(a, {}, b)), "ecc", Severity::fail));
  auto c = clean(), d = clean();
  d.ecc_corrected_volatile = 100;  // not above 100
  EXPECT_EQ(judge(h100(), window(c, {busy()}, d)).severity, Severity::pass);
  d.ecc_corrected_volatile = 101;
  EXPECT_TRUE(has(judge(h100(), window(c, {busy()}, d)), "ecc", Severity::warn));
}

TEST(HealthVerdict, EccDisabledIsANoteNotAFinding) {
  auto g = h100();
  g.ecc_enabled = false;
  auto a = clean(), b = clean();
  a.ecc_uncorrected_volatile.reset();
  b.ecc_uncorrected_volatile.reset();
  const auto v = judge(g, window(a, {busy()}, b));
  EXPECT_EQ(v.severity, Severity::pass);
  ASSERT_FALSE(v.notes.empty());
  EXPECT_NE(v.notes.front().find("ECC is disabled"), std::string::npos);
}

TEST(HealthVerdict, RowRemapPendingAndFailedFail) {
  auto b = clean();
  b.remap_pending = true;
  EXPECT_TRUE(has(judge(h100(), window(clean(), {busy()}, b)), "row_remap", Severity::fail));
  auto c = clean();
  c.remap_failed = true;
  const auto v = judge(h100(), window(clean(), {busy()}, c));
  EXPECT_TRUE(has(v, "row_remap", Severity::fail));
  EXPECT_NE(v.line().find("row remapping failed"), std::string::npos);
}

TEST(HealthVerdict, XidEventsJudgedByTheirCode) {
  auto o = window(clean(), {busy()}, clean());
  o.add(XidEvent{0.5, 79});
  o.add(XidEvent{0.6, 79});
  const auto v = judge(h100(), o);
  EXPECT_EQ(v.severity, Severity::fail);
  EXPECT_NE(v.line().find("Xid 79 (GPU has fallen off the bus), 2 times"), std::string::npos) << v.line();

  auto w = window(clean(), {busy()}, clean());
  w.add(XidEvent{0.1, 94});
  EXPECT_EQ(judge(h100(), w).severity, Severity::warn);  // contained ECC error
  auto x = window(clean(), {busy()}, clean());
  x.add(XidEvent{0.1, 43});
  EXPECT_EQ(judge(h100(), x).severity, Severity::pass);  // an application's channel reset
  auto y = window(clean(), {busy()}, clean());
  y.add(XidEvent{0.1, 9999});
  EXPECT_EQ(judge(h100(), y).severity, Severity::warn);  // not in the table: "other"
}

TEST(HealthVerdict, PcieWidthBelowMaxWarnsGenOnlyUnderLoad) {
  auto s = busy();
  s.pcie_width = 8;
  const auto v = judge(h100(), window(clean(), {s, s}, clean()));
  EXPECT_EQ(v.severity, Severity::warn);
  EXPECT_NE(v.line().find("PCIe link x8, below its maximum x16"), std::string::npos) << v.line();

  // An idle GPU's link drops to Gen1: not judged, and said so.
  auto idle = busy();
  idle.gpu_util_percent = 0;
  idle.pcie_gen = 1;
  const auto i = judge(h100(), window(clean(), {idle}, clean()));
  EXPECT_FALSE(has(i, "pcie", Severity::warn)) << i.line();
  bool noted = false;
  for (const auto& n : i.notes) noted |= n.find("PCIe generation not judged") != std::string::npos;
  EXPECT_TRUE(noted);
  auto slow = busy();
  slow.pcie_gen = 3;
  EXPECT_TRUE(has(judge(h100(), window(clean(), {slow}, clean())), "pcie", Severity::warn));
}

// `n` links whose four error counters all read `value` (nullopt: NVML does not support them).
std::vector<NvlinkCounters> nvlink_counters(std::size_t n, std::optional<std::uint64_t> value) {
  NvlinkCounters one;
  one.fill(value);
  return std::vector<NvlinkCounters>(n, one);
}

TEST(HealthVerdict, NvlinkDownFailsOnlyWhenOtherLinksAreUp) {
  auto a = clean(), b = clean();
  a.nvlink_up = {true, true, true, true};
  b.nvlink_up = {true, true, false, true};
  a.nvlink_errors = b.nvlink_errors = nvlink_counters(4, 0);
  const auto v = judge(h100(), window(a, {busy()}, b));
  EXPECT_TRUE(has(v, "nvlink", Severity::fail));
  EXPECT_NE(v.line().find("NVLink link 2 down"), std::string::npos) << v.line();
  auto c = clean();
  c.nvlink_up = {false, false};  // a PCIe card without a bridge: nothing to judge
  c.nvlink_errors = nvlink_counters(2, 0);
  EXPECT_EQ(judge(h100(), window(c, {busy()}, c)).severity, Severity::pass);
}

TEST(HealthVerdict, UnsupportedNvlinkCountersAreNotZeroErrors) {
  std::mt19937_64 rng(test_seed());
  auto a = clean(), b = clean();
  a.nvlink_up = b.nvlink_up = {true, true, true, true};
  // Every counter unsupported: nothing is judged, and the verdict says so instead of passing them as 0.
  a.nvlink_errors = b.nvlink_errors = nvlink_counters(4, std::nullopt);
  auto v = judge(h100(), window(a, {busy()}, b));
  EXPECT_FALSE(has(v, "nvlink", Severity::warn));
  bool noted = false;
  for (const auto& n : v.notes) noted |= n.find("NVLink errors not judged") != std::string::npos;
  EXPECT_TRUE(noted) << v.line();
  // One supported counter on a random link rises past the limit (100): only it is counted.
  const auto link = static_cast<std::size_t>(rng() % 4), counter = static_cast<std::size_t>(rng() % 4);
  const auto rise = 101 + rng() % 1000;
  a.nvlink_errors[link][counter] = 7;
  b.nvlink_errors[link][counter] = 7 + rise;
  v = judge(h100(), window(a, {busy()}, b));
  EXPECT_TRUE(has(v, "nvlink", Severity::warn)) << v.line();
  EXPECT_NE(v.line().find(fmt::format("NVLink errors +{}", rise)), std::string::npos) << v.line();
  // A counter read only at the end (an error at the start) is not a rise from zero.
  b.nvlink_errors[(link + 1) % 4][counter] = 5000;
  EXPECT_NE(judge(h100(), window(a, {busy()}, b)).line().find(fmt::format("NVLink errors +{}", rise)),
            std::string::npos);
  // Within the limit, or reset to a lower value: no finding.
  b.nvlink_errors = a.nvlink_errors;
  b.nvlink_errors[link][counter] = 7 + 100;
  EXPECT_FALSE(has(judge(h100(), window(a, {busy()}, b)), "nvlink", Severity::warn));
  b.nvlink_errors[link][counter] = 0;
  EXPECT_FALSE(has(judge(h100(), window(a, {busy()}, b)), "nvlink", Severity::warn));
}

TEST(HealthVerdict, ClocksFarBelowMaxUnderLoadWarn) {
  const auto v = judge(h100(), window(clean(), {busy(1000), busy(1000), busy(1980)}, clean()));
  EXPECT_TRUE(has(v, "clocks", Severity::warn)) << v.line();
  EXPECT_FALSE(has(judge(h100(), window(clean(), {busy(1400), busy(1500)}, clean())), "clocks", Severity::warn));
}

TEST(HealthVerdict, OtherProcessesWarnExclusiveHeldFails) {
  auto b = clean();
  b.processes = std::vector<GpuProcess>{{4242, 1ULL << 30}, {777, 0}};
  GpuIdentity g = h100();
  const Observation o = window(clean(), {busy()}, b);
  const auto shared = judge_gpu({g, o, {777}, {}}, builtin_thresholds());  // 777 is this job's
  EXPECT_EQ(shared.severity, Severity::warn);
  EXPECT_NE(shared.line().find("pid 4242"), std::string::npos);
  EXPECT_EQ(shared.line().find("pid 777"), std::string::npos) << shared.line();
  g.compute_mode = "exclusive_process";
  const auto held = judge_gpu({g, o, {777}, {}}, builtin_thresholds());
  EXPECT_EQ(held.severity, Severity::fail);
  EXPECT_NE(held.line().find("exclusive compute mode held by another process: pid 4242"), std::string::npos);
}

// In a PID namespace of our own NVML's PIDs are the host's: this job's own process, listed by its host
// PID, is not "another process"; only more processes than the job has are.
TEST(HealthVerdict, PidNamespaceCannotTellUnlessMoreProcessesThanTheJobs) {
  std::mt19937_64 rng(test_seed());
  const unsigned host_pid = 100000 + static_cast<unsigned>(rng() % 100000), own = 1 + static_cast<unsigned>(rng() % 50);
  auto b = clean();
  b.processes = std::vector<GpuProcess>{{host_pid, 1ULL << 30}};  // our own process, by its host PID
  GpuIdentity g = h100();
  g.compute_mode = "exclusive_process";
  const Observation o = window(clean(), {busy()}, b);
  const auto ours = judge_gpu({g, o, {own}, {}, false}, builtin_thresholds());
  EXPECT_FALSE(has(ours, "in_use", Severity::warn)) << ours.line();
  EXPECT_FALSE(has(ours, "in_use", Severity::fail)) << ours.line();
  bool noted = false;
  for (const auto& n : ours.notes) noted = noted || n.find("cannot tell (PID namespace)") != std::string::npos;
  EXPECT_TRUE(noted) << fmt::format("{}", fmt::join(ours.notes, "; "));

  b.processes->push_back({host_pid + 1, 0});  // two processes, one of them ours: one is another's
  const auto held = judge_gpu({g, window(clean(), {busy()}, b), {own}, {}, false}, builtin_thresholds());
  EXPECT_TRUE(has(held, "in_use", Severity::fail)) << held.line();
  EXPECT_NE(held.line().find("at least 1 other process"), std::string::npos) << held.line();
}

TEST(HealthVerdict, GpuLostFails) {
  auto s = busy();
  s.gpu_lost = true;
  EXPECT_TRUE(has(judge(h100(), window(clean(), {s}, clean())), "gpu_lost", Severity::fail));
}

TEST(HealthVerdict, PerfFractionsAgainstTheExpectedPeak) {
  auto perf = [](double value, std::optional<double> peak) {
    PerfResult p{"memory_bandwidth", "stream.triad fp64 1 GiB", "GB/s", value, peak, "test peak", true, true, ""};
    return std::vector<PerfResult>{p};
  };
  const auto g = h100();
  const auto o = window(clean(), {busy()}, clean());
  EXPECT_EQ(judge_gpu({g, o, {}, perf(3000, 3350)}, builtin_thresholds()).severity, Severity::pass);
  EXPECT_EQ(judge_gpu({g, o, {}, perf(2000, 3350)}, builtin_thresholds()).severity, Severity::warn);
  const auto slow = judge_gpu({g, o, {}, perf(1000, 3350)}, builtin_thresholds());
  EXPECT_EQ(slow.severity, Severity::fail);
  EXPECT_NE(slow.line().find("30% of the expected 3350"), std::string::npos) << slow.line();
  const auto unknown = judge_gpu({g, o, {}, perf(1000, std::nullopt)}, builtin_thresholds());
  EXPECT_EQ(unknown.severity, Severity::pass);  // no peak: not judged, never guessed
  EXPECT_FALSE(unknown.notes.empty());
  auto wrong = perf(3000, 3350);
  wrong[0].valid = false;
  wrong[0].error = "verification failed: c[7] = 1 (expected 2)";
  EXPECT_EQ(judge_gpu({g, o, {}, wrong}, builtin_thresholds()).severity, Severity::fail);
}

TEST(HealthVerdict, ThresholdsFileChangesSeverities) {
  const auto t = parse_thresholds(R"({"pcie": {"width_below_max": "fail"}, "clock_events": {"SW_POWER_CAP": "warn"}})",
                                  "test.json");
  auto s = busy(1800, *clock_event_bit("SW_POWER_CAP"));
  s.pcie_width = 8;
  const auto v = judge(h100(), window(clean(), {s}, clean()), t);
  EXPECT_TRUE(has(v, "pcie", Severity::fail));
  EXPECT_TRUE(has(v, "clock_events", Severity::warn));
  // the defaults the file does not name stay
  EXPECT_EQ(t.clock_event("HW_THERMAL"), Severity::fail);
  EXPECT_EQ(t.source, "test.json");
}

TEST(HealthVerdict, SoftwareDriverTooOldAndContainerMismatch) {
  SoftwareVersions v;
  v.driver = "535.104.05";
  v.driver_cuda = 12020;
  v.runtime_cuda = 12040;
  const auto old = judge_software(v, builtin_thresholds());
  EXPECT_EQ(old.severity, Severity::fail);
  EXPECT_NE(old.line().find("driver 535.104.05 supports CUDA 12.2, older than the CUDA runtime 12.4"), std::string::npos)
      << old.line();
  // A forward-compatibility libcuda in the container makes 12.4 usable, and says it differs.
  v.libcuda_cuda = 12040;
  const auto compat = judge_software(v, builtin_thresholds());
  EXPECT_EQ(compat.severity, Severity::warn) << compat.line();
  EXPECT_NE(compat.line().find("differs from the host's kernel driver 535.104.05 (CUDA 12.2)"), std::string::npos);
  SoftwareVersions ok{"550.54.15", 12040, 12040, 12040, "2.21.5"};
  EXPECT_EQ(judge_software(ok, builtin_thresholds()).severity, Severity::pass);
}

TEST(HealthVerdict, CudaVersionText) {
  EXPECT_EQ(parse_cuda_version("12.4"), 12040);
  EXPECT_EQ(parse_cuda_version("13.0.1"), 13000);
  EXPECT_EQ(parse_cuda_version("12"), std::nullopt);
  EXPECT_EQ(parse_cuda_version("12.4beta"), std::nullopt);
  EXPECT_EQ(cuda_version_text(12080), "12.8");
  const auto sw = software_versions(SystemInfo{"550.54.15", std::nullopt, 12040, {}, {}},
                                    {{"driver", "12.4"}, {"cuda_runtime", "12.4"}, {"nccl", nullptr}});
  EXPECT_EQ(sw.libcuda_cuda, 12040);
  EXPECT_EQ(sw.runtime_cuda, 12040);
  EXPECT_FALSE(sw.nccl);
}

}  // namespace
}  // namespace gpuscale::health
