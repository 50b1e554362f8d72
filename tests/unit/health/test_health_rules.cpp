// The health module's pure parts besides the verdict: the thresholds file, clock event names, the
// consistency check, matching a rank's device to an NVML GPU, MIG peaks, the sampling-period flag,
// the job report and the drain line, and the run's throttled-row flag.
#include <gtest/gtest.h>

#include "core/error.h"
#include "health/clock_events.h"
#include "health/consistency.h"
#include "health/device_match.h"
#include "health/health_check.h"
#include "health/health_job.h"
#include "health/nvml/nvml_gpu.h"
#include "analysis/health_text.h"
#include "health/run_telemetry.h"
#include "health/telemetry_options.h"
#include "health/thresholds.h"

namespace gpuscale::health {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_thresholds(text, "t.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HealthThresholds, BuiltInRulesAreDcgmsFailureClasses) {
  const auto& t = builtin_thresholds();
  EXPECT_EQ(t.source, "built-in");
  for (const char* n : {"HW_SLOWDOWN", "SW_THERMAL", "HW_THERMAL", "HW_POWER_BRAKE"}) EXPECT_EQ(t.clock_event(n), Severity::fail);
  EXPECT_EQ(t.clock_event("SW_POWER_CAP"), Severity::pass);
  EXPECT_EQ(t.remap_pending, Severity::fail);
  EXPECT_EQ(t.ecc_uncorrected_increase, Severity::fail);
  EXPECT_EQ(t.xid_rule(79).severity, Severity::fail);
  EXPECT_EQ(t.xid_rule(95).severity, Severity::fail);
  EXPECT_EQ(t.xid_rule(12345).severity, t.xid_other);
}

TEST(HealthThresholds, BadFilesNameTheKey) {
  EXPECT_NE(error_of("{").find("t.json: not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("[]").find("expected a JSON object"), std::string::npos);
  EXPECT_NE(error_of(R"({"pcie": {"widht_below_max": "warn"}})").find("pcie.widht_below_max: unknown key"), std::string::npos);
  EXPECT_NE(error_of(R"({"row_remap": {"pending": "maybe"}})").find("row_remap.pending: expected \"fail\""), std::string::npos);
  EXPECT_NE(error_of(R"({"clock_events": {"TOO_HOT": "fail"}})").find("unknown clock event reason"), std::string::npos);
  EXPECT_NE(error_of(R"({"xid": {"codes": {"x79": {"severity": "fail", "meaning": "m"}}}})").find("decimal"), std::string::npos);
  EXPECT_NE(error_of(R"({"performance": {"gemm": {"warn_below": 0.3, "fail_below": 0.5}}})").find("fail_below is above"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"temperature": {"severity": "warn", "above": "hot"}})").find("temperature.above"), std::string::npos);
  EXPECT_NE(error_of(R"({"ecc": null})").find("ecc: missing"), std::string::npos);
  EXPECT_THROW(load_thresholds("/no/such/thresholds.json"), Error);
}

TEST(HealthThresholds, HostileFilesAreOneLineErrors) {
  // Nesting beyond the strict reader's depth (merge_patch and dump() would recurse on it).
  std::string deep = R"({"pcie": )";
  for (int i = 0; i < 100000; ++i) deep += "[";
  EXPECT_NE(error_of(deep).find("t.json"), std::string::npos);
  EXPECT_NE(error_of(R"({"pcie": {}, "pcie": {}})").find("duplicate"), std::string::npos);
  EXPECT_NE(error_of(R"({"temperature": {"severity": "warn", "above": NaN}})").find("t.json"), std::string::npos);
  // Not a regular file, or too large: refused before it is read.
  for (const char* path : {"/dev/zero", "/proc/self", "/"}) {
    try {
      load_thresholds(path);
      ADD_FAILURE() << path << " was read";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("cannot read --health-thresholds file"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(HealthThresholds, AFileAddsXidCodes) {
  const auto t = parse_thresholds(R"({"xid": {"codes": {"154": {"severity": "fail", "meaning": "recovery action"}}}})", "f");
  EXPECT_EQ(t.xid_rule(154).severity, Severity::fail);
  EXPECT_EQ(t.xid_rule(154).meaning, "recovery action");
  EXPECT_EQ(t.xid_rule(79).severity, Severity::fail);  // defaults kept
}

TEST(HealthClockEvents, NamesAndUnknownBits) {
  EXPECT_EQ(clock_event_names(0x8 | 0x40), (std::vector<std::string>{"HW_SLOWDOWN", "HW_THERMAL"}));
  EXPECT_EQ(clock_event_names(0x1000), std::vector<std::string>{"0x1000"});
  EXPECT_EQ(clock_event_bit("HW_POWER_BRAKE"), 0x80u);
  EXPECT_FALSE(clock_event_bit("NOPE"));
}

TEST(HealthConsistency, TheOddNodeIsListed) {
  std::vector<UnitFacts> ranks;
  for (int r = 0; r < 8; ++r)
    ranks.push_back({r, r < 6 ? "node1" : "node2",
                     {{"driver_version", r < 6 ? "550.54.15" : "535.104.05"}, {"device_model", "NVIDIA H100 80GB HBM3"},
                      {"power_limit_w", 700.0}, {"nccl", nullptr}}});
  const auto found = find_inconsistencies(ranks);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].field, "driver_version");
  EXPECT_EQ(found[0].majority, "550.54.15");
  EXPECT_EQ(found[0].majority_count, 6u);
  ASSERT_EQ(found[0].others.size(), 1u);
  EXPECT_EQ(found[0].others[0].hosts, std::vector<std::string>{"node2"});
  EXPECT_EQ(found[0].others[0].units, (std::vector<int>{6, 7}));
  EXPECT_EQ(describe(found[0], "rank"), "driver_version differs: 550.54.15 on 6 ranks; 535.104.05 on node2 (ranks 6, 7)");
  // nulls are unknown, not a difference
  ranks[0].fields["nccl"] = "2.21.5";
  EXPECT_EQ(find_inconsistencies(ranks).size(), 1u);
}

TEST(HealthDeviceMatch, ByUuidMigUuidThenBusId) {
  GpuIdentity a, b;
  a.uuid = "GPU-AAAA";
  a.pci_bus_id = "00000000:18:00.0";
  b.uuid = "GPU-bbbb";
  b.pci_bus_id = "00000000:3B:00.0";
  b.sm_count = 132;
  b.memory_bytes = 80ULL << 30;
  MigInstance m;
  m.uuid = "MIG-cccc";
  m.sm_count = 66;
  m.memory_mib = 40 * 1024;
  b.mig_instances.push_back(m);
  const std::vector<GpuIdentity> gpus{a, b};
  auto x = match_device(gpus, {{"uuid", "GPU-aaaa"}});
  EXPECT_EQ(x.gpu, 0);
  EXPECT_EQ(x.mig, -1);
  x = match_device(gpus, {{"uuid", "MIG-CCCC"}});
  EXPECT_EQ(x.gpu, 1);
  EXPECT_EQ(x.mig, 0);
  x = match_device(gpus, {{"uuid", "GPU-none"}, {"pci_bus_id", "0000:3b:00.0"}});  // CUDA's form of the bus id
  EXPECT_EQ(x.gpu, 1);
  EXPECT_NE(x.how.find("PCI bus id"), std::string::npos);
  x = match_device(gpus, {{"threads", 4}});
  EXPECT_EQ(x.gpu, -1);
  EXPECT_EQ(x.why_none, "the device records no GPU uuid or PCI bus id");
  const auto peaks = mig_peaks(b, m);
  EXPECT_EQ(peaks["applies"], "slice share");
  EXPECT_DOUBLE_EQ(peaks["compute_fraction"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(peaks["memory_bandwidth_fraction"].get<double>(), 0.5);
  m.sm_count.reset();
  EXPECT_EQ(mig_peaks(b, m)["applies"], "unknown");
}

TEST(HealthDeviceMatch, BusIdAndUuidKeys) {
  EXPECT_EQ(pci_bus_key("00000000:18:00.0"), pci_bus_key("0000:18:00.0"));
  EXPECT_NE(pci_bus_key("0000:18:00.0"), pci_bus_key("0000:19:00.0"));
  EXPECT_FALSE(pci_bus_key("18:00"));
  EXPECT_FALSE(pci_bus_key("0000:18:00.0x"));
  EXPECT_EQ(uuid_key("GPU-AbC"), "abc");
  EXPECT_EQ(uuid_key("MIG-AbC"), "abc");
}

TEST(HealthOptions, TelemetryInterval) {
  EXPECT_EQ(parse_interval("100ms", "f").count(), 100000);
  EXPECT_EQ(parse_interval("10", "f").count(), 10000);
  EXPECT_EQ(parse_interval("0.5s", "f").count(), 500000);
  EXPECT_EQ(parse_interval("1500us", "f").count(), 1500);
  for (const char* bad : {"0", "500us", "61s", "fast", "", "10 ms", "nan"}) EXPECT_THROW(parse_interval(bad, "f"), Error) << bad;
  try {
    parse_interval("0", "--telemetry-interval");
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "invalid --telemetry-interval '0': expected a period from 1ms to 60s, e.g. 100ms");
  }
}

nlohmann::json node(const std::string& host, int code, const std::string& driver, std::optional<std::string> drain) {
  nlohmann::json gpus = nlohmann::json::array();
  for (int i = 0; i < 2; ++i)
    gpus.push_back({{"index", i}, {"identity", {{"name", "NVIDIA H100 80GB HBM3"}, {"power_limit_w", 700.0}}}});
  return {{"host", host},
          {"exit_code", code},
          {"software", {{"driver", driver}}},
          {"gpus", gpus},
          {"drain_command", drain ? nlohmann::json(*drain) : nlohmann::json(nullptr)},
          {"lines", {"GPU 0 ...: PASS", "GPU 1 ...: PASS"}}};
}

TEST(HealthJob, WorstCodeOrder) {
  EXPECT_EQ(worst_exit_code({}), 0);
  EXPECT_EQ(worst_exit_code({0, 1, 0}), 1);
  EXPECT_EQ(worst_exit_code({1, 3}), 3);
  EXPECT_EQ(worst_exit_code({3, 2, 1}), 2);
  EXPECT_EQ(worst_exit_code({2, 5}), 5);
}

TEST(HealthJob, NodesCombineWithTheirLinesDrainsAndDifferences) {
  const auto one = combine_node_reports({node("n1", 0, "550.54.15", std::nullopt)}, builtin_thresholds());
  EXPECT_EQ(one.exit_code, 0);
  EXPECT_EQ(one.lines.front(), "GPU 0 ...: PASS");  // alone: no node prefix
  EXPECT_EQ(one.doc["verdict"], "PASS");

  const auto job = combine_node_reports(
      {node("n1", 0, "550.54.15", std::nullopt), node("n2", 2, "550.54.15", "scontrol update nodename=n2 ..."),
       node("n3", 0, "535.104.05", std::nullopt)},
      builtin_thresholds());
  EXPECT_EQ(job.exit_code, 2);
  EXPECT_EQ(job.doc["verdict"], "FAIL");
  EXPECT_EQ(job.lines.front(), "n1: GPU 0 ...: PASS");
  EXPECT_EQ(job.drain, std::vector<std::string>{"scontrol update nodename=n2 ..."});
  ASSERT_EQ(job.doc["consistency"].size(), 1u);
  EXPECT_EQ(job.doc["consistency"][0]["field"], "driver_version");
  EXPECT_NE(job.lines.back().find("535.104.05 on n3 (GPUs 0, 1)"), std::string::npos) << job.lines.back();

  // a difference alone makes the job WARN
  const auto differ = combine_node_reports({node("n1", 0, "550.54.15", std::nullopt), node("n3", 0, "535.104.05", std::nullopt)},
                                           builtin_thresholds());
  EXPECT_EQ(differ.exit_code, 1);
  const auto failed = failed_node_report("n4.cluster", "cannot read --health-thresholds file 'x'");
  EXPECT_EQ(failed["exit_code"], 5);
  EXPECT_EQ(failed["node_name"], "n4");
}

TEST(HealthJob, DrainLineNamesTheFirstFailingGpuAndIsSafeToPaste) {
  HealthReport r;
  r.node_name = "gpu-a17";
  r.exit_code = kHealthFail;
  GpuReport ok{}, bad{}, bad2{};
  ok.identity.index = 0;
  bad.identity.index = 1;
  bad.verdict.add("row_remap", Severity::fail, "row remapping pending (\"reset\" `needed` $HOME)");
  bad2.identity.index = 2;
  bad2.verdict.add("xid", Severity::fail, "Xid 79");
  r.gpus = {ok, bad, bad2};
  const auto cmd = drain_command(r);
  EXPECT_EQ(cmd, "scontrol update nodename=gpu-a17 state=drain reason=\"gpuscale: GPU 1 row remapping pending ( reset   "
                 "needed   HOME) (+1 more GPU)\"");
  // The line follows the GPUs' verdicts, not the exit code: a GPU failed, then DCGM's diagnostic could
  // not be read (exit 5): the node is still drained.
  r.exit_code = kHealthCannotCheck;
  EXPECT_EQ(drain_command(r), cmd);
  r.gpus = {ok, ok};
  EXPECT_EQ(drain_command(r), "");
  r.gpus[1].verdict.add("pcie", Severity::warn, "PCIe x8 of x16");
  r.exit_code = kHealthWarn;
  EXPECT_EQ(drain_command(r), "");
}

TEST(HealthRun, ThrottledRowsAreFlagged) {
  ResultRow row;
  RankValue a, b, c;
  a.rank = 0;
  b.rank = 1;
  c.rank = 2;
  a.metrics["telemetry"] = {{"throttled", false}};
  b.metrics["telemetry"] = {{"throttled", true}, {"throttle_reasons", {"HW_THERMAL"}}};
  row.ranks = {a, b, c};
  flag_throttled(row);
  EXPECT_TRUE(row.metrics["throttled"].get<bool>());
  EXPECT_EQ(row.metrics["throttled_ranks"], nlohmann::json({1}));
  ResultRow plain;
  plain.ranks = {c};
  flag_throttled(plain);
  EXPECT_FALSE(plain.metrics.contains("throttled"));  // no telemetry: nothing claimed either way
  const nlohmann::json health = {{"telemetry", "available"}, {"reason", nullptr}, {"thresholds", "built-in"},
                                 {"counts", {{"PASS", 1}, {"WARN", 0}, {"FAIL", 0}}}, {"gpus", nlohmann::json::array()},
                                 {"consistency", nlohmann::json::array()}};
  row.benchmark = "stream.triad";
  row.gpu_count = 3;
  const auto text = gpuscale::format_health(health, {row});
  EXPECT_NE(text.find("1 measurement(s) taken while a GPU was throttled"), std::string::npos) << text;
  EXPECT_NE(text.find("stream.triad"), std::string::npos) << text;
  EXPECT_NE(text.find("at 3 GPU(s): rank 1 (HW_THERMAL)"), std::string::npos) << text;
}

}  // namespace
}  // namespace gpuscale::health
