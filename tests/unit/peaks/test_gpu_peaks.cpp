// The expected-peak table (peaks/gpu_peaks.h): the built-in data, detection, --peaks files.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "test_seed.h"
#include "core/error.h"
#include "peaks/gpu_peaks.h"
#include "usage_error.h"

namespace gpuscale {
namespace {

GpuPeakTable builtin() { return GpuPeakTable(parse_gpu_peaks(builtin_gpu_peaks_text(), "built-in peaks"), {}); }

DeviceInfo gpu(const std::string& name, const char* pci = nullptr, const char* cc = nullptr, int sms = 0) {
  DeviceInfo d;
  d.backend = "cuda";
  d.name = name;
  if (pci) d.details["pci_device_id"] = pci;
  if (cc) d.details["compute_capability"] = cc;
  if (sms) d.details["sm_count"] = sms;
  return d;
}

std::string model_of(const GpuPeakTable& t, const std::string& name) {
  const auto m = t.find(cuda::gpu_identity(gpu(name)));
  return m.model ? m.model->model : "";
}

TEST(GpuPeaks, BuiltInTableCoversTheModelsUsersRun) {
  const auto t = builtin();
  for (const char* name : {"Tesla V100-SXM2-32GB", "NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB",
                           "NVIDIA A100 80GB PCIe", "NVIDIA A10", "NVIDIA A30", "NVIDIA L4", "NVIDIA L40S",
                           "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200",
                           "NVIDIA H200 NVL", "NVIDIA GH200 480GB", "NVIDIA GH200 144G HBM3e", "NVIDIA B200",
                           "NVIDIA GB200"})
    EXPECT_NE(model_of(t, name), "") << name;
}

TEST(GpuPeaks, EveryFigureHasASourceAndKnownFiguresArePositive) {
  const auto table = builtin();
  for (const auto& m : table.models()) {
    auto check = [&](const ExpectedPeak& p, const std::string& what) {
      EXPECT_FALSE(p.source.empty()) << m.model << " " << what;
      if (p.value) {
        EXPECT_GT(*p.value, 0) << m.model << " " << what;
      }
    };
    check(m.memory_bandwidth, "memory");
    EXPECT_TRUE(m.memory_bandwidth.value) << m.model;
    check(m.nvlink, "nvlink");
    check(m.pcie, "pcie");
    EXPECT_TRUE(m.pci_device_id && m.cc && m.sm_count) << m.model << " lacks the second key";
    for (DType t : {DType::fp64, DType::fp32, DType::tf32, DType::bf16, DType::fp16, DType::fp8_e4m3, DType::int8}) {
      ASSERT_TRUE(m.compute.count(t)) << m.model << " " << dtype_name(t);
      check(m.compute.at(t), std::string(dtype_name(t)));
    }
  }
}

TEST(GpuPeaks, DenseFiguresOfTheH200) {
  const auto t = builtin();
  const auto h200 = gpu("NVIDIA H200");
  EXPECT_EQ(t.memory_bandwidth(h200).value, 4800);
  EXPECT_EQ(t.compute(h200, DType::bf16).value, 989.5);  // 1979 with sparsity, halved
  EXPECT_EQ(t.compute(h200, DType::fp8_e4m3).value, 1979);
  EXPECT_EQ(t.compute(h200, DType::fp64).value, 67);
  const auto bf16 = t.compute(h200, DType::bf16).source;
  EXPECT_NE(bf16.find("halved to dense"), std::string::npos) << bf16;
  EXPECT_NE(bf16.find("H200 SXM 141GB"), std::string::npos) << bf16;
  EXPECT_NE(bf16.find("name 'NVIDIA H200'"), std::string::npos) << bf16;
}

TEST(GpuPeaks, ExactNamesNeverSubstrings) {
  const auto t = builtin();
  EXPECT_EQ(model_of(t, "NVIDIA A10"), "A10");
  EXPECT_EQ(model_of(t, "NVIDIA A100-SXM4-80GB"), "A100 SXM4 80GB");
  EXPECT_EQ(model_of(t, "NVIDIA H200"), "H200 SXM 141GB");
  EXPECT_EQ(model_of(t, "NVIDIA H200 NVL"), "H200 NVL 141GB");
  EXPECT_EQ(model_of(t, "NVIDIA L4"), "L4");
  EXPECT_EQ(model_of(t, "NVIDIA L40S"), "L40S");
  EXPECT_EQ(model_of(t, "NVIDIA B200"), "B200 (HGX)");
  EXPECT_EQ(model_of(t, "NVIDIA GB200"), "GB200 (per GPU)");
  EXPECT_EQ(t.memory_bandwidth(gpu("NVIDIA L4")).value, 300);
  EXPECT_EQ(t.memory_bandwidth(gpu("NVIDIA L40S")).value, 864);
  // Names that merely contain a known one are unknown.
  EXPECT_EQ(model_of(t, "NVIDIA A10G"), "");
  EXPECT_EQ(model_of(t, "NVIDIA H200 NVL2"), "");
  EXPECT_EQ(model_of(t, "NVIDIA L40"), "");
  EXPECT_EQ(model_of(t, "NVIDIA A100"), "");
}

TEST(GpuPeaks, TheNvidiaPrefixMayBeMissingOnEitherSide) {
  const auto t = builtin();
  EXPECT_EQ(model_of(t, "H100 80GB HBM3"), "H100 SXM5 80GB");  // older drivers drop the prefix
  EXPECT_EQ(model_of(t, "  NVIDIA H200 NVL "), "H200 NVL 141GB");
  EXPECT_EQ(model_of(t, "NVIDIA Tesla V100-SXM2-32GB"), "V100 SXM2 32GB");
  EXPECT_EQ(model_of(t, "Tesla V100-SXM2-32GB"), "V100 SXM2 32GB");
  EXPECT_EQ(normalized_gpu_name("NVIDIA  GH200 480GB"), "GH200 480GB");
}

TEST(GpuPeaks, PciIdComputeCapabilityAndSmCountAsTheSecondKey) {
  const auto t = builtin();
  // An engineering sample or a new driver string: found by its PCI id, compute capability and SMs.
  auto m = t.find(cuda::gpu_identity(gpu("NVIDIA Graphics Device", "0x2335", "9.0", 132)));
  ASSERT_TRUE(m.model);
  EXPECT_EQ(m.model->model, "H200 SXM 141GB");
  EXPECT_NE(m.how.find("PCI id 0x2335"), std::string::npos) << m.how;
  // All three must agree: a cut-down part with fewer SMs is not the datasheet's GPU.
  EXPECT_FALSE(t.find(cuda::gpu_identity(gpu("NVIDIA Graphics Device", "0x2335", "9.0", 114))).model);
  EXPECT_FALSE(t.find(cuda::gpu_identity(gpu("NVIDIA Graphics Device", "0x2335", "8.9", 132))).model);
  EXPECT_FALSE(t.find(cuda::gpu_identity(gpu("NVIDIA Graphics Device", nullptr, "9.0", 132))).model);
  // The name wins over the second key.
  EXPECT_EQ(t.find(cuda::gpu_identity(gpu("NVIDIA H200 NVL", "0x2335", "9.0", 132))).model->model, "H200 NVL 141GB");
}

TEST(GpuPeaks, UnknownGpuRunsWithNullPeaksAndSaysHowToAddIt) {
  const auto t = builtin();
  const auto d = gpu("NVIDIA RTX PRO 9999");
  for (const auto& p : {t.memory_bandwidth(d), t.compute(d, DType::bf16), t.link_bandwidth(d, LinkKind::peer)}) {
    EXPECT_FALSE(p.value);
    EXPECT_EQ(p.source, "unknown GPU 'NVIDIA RTX PRO 9999' (add it with --peaks FILE)");
  }
}

TEST(GpuPeaks, UnknownFiguresAreNullWithTheirReason) {
  const auto t = builtin();
  const auto a100 = t.compute(gpu("NVIDIA A100-SXM4-80GB"), DType::fp8_e4m3);
  EXPECT_FALSE(a100.value);
  EXPECT_NE(a100.source.find("no FP8"), std::string::npos) << a100.source;
  EXPECT_FALSE(t.compute(gpu("NVIDIA L4"), DType::fp64).value);
  EXPECT_FALSE(t.compute(gpu("Tesla V100-SXM2-32GB"), DType::bf16).value);
}

TEST(GpuPeaks, LinksPerDirection) {
  const auto t = builtin();
  const auto h100 = gpu("NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.link_bandwidth(h100, LinkKind::nvlink).value, 450);
  EXPECT_EQ(t.link_bandwidth(h100, LinkKind::pcie).value, 63);
  EXPECT_EQ(t.link_bandwidth(h100, LinkKind::host).value, 63);
  EXPECT_EQ(t.link_bandwidth(h100, LinkKind::peer).value, 450);
  // PCIe cards with an optional NVLink bridge: peers are set against PCIe.
  const auto pcie = gpu("NVIDIA H100 PCIe");
  EXPECT_EQ(t.link_bandwidth(pcie, LinkKind::peer).value, 63);
  EXPECT_NE(t.link_bandwidth(pcie, LinkKind::peer).source.find("optional bridge"), std::string::npos);
  // No NVLink at all.
  EXPECT_FALSE(t.link_bandwidth(gpu("NVIDIA L40S"), LinkKind::nvlink).value);
  EXPECT_EQ(t.link_bandwidth(gpu("NVIDIA L40S"), LinkKind::peer).value, 31.5);
  // Grace Hopper reaches host memory over NVLink-C2C.
  EXPECT_EQ(t.link_bandwidth(gpu("NVIDIA GH200 480GB"), LinkKind::host).value, 450);
}

const char* kUserFile = R"({
  "format": "gpuscale-peaks", "version": 1,
  "models": [
    {"model": "My H200 at 600 W", "names": ["NVIDIA H200"],
     "memory_bandwidth": {"value": 4700, "source": "our acceptance test"},
     "compute": {"bf16": {"value": 900, "source": "our acceptance test"}},
     "nvlink": {"value": 450, "source": "NVLink4"}, "pcie": {"value": 63, "source": "Gen5"}},
    {"model": "Lab card", "names": ["NVIDIA RTX PRO 9999"], "pci_device_id": "0xabcd",
     "compute_capability": "12.0", "sm_count": 188,
     "memory_bandwidth": {"value": 1800, "source": "vendor sheet"}, "compute": {},
     "nvlink": {"value": null, "source": "none"}, "pcie": {"value": 63, "source": "Gen5"}}
  ]})";

TEST(GpuPeaks, PeaksFileAddsAndReplacesModels) {
  const GpuPeakTable t(parse_gpu_peaks(builtin_gpu_peaks_text(), "built-in peaks"), parse_gpu_peaks(kUserFile, "my.json"));
  const auto h200 = t.memory_bandwidth(gpu("NVIDIA H200"));
  EXPECT_EQ(h200.value, 4700);
  EXPECT_NE(h200.source.find("my.json"), std::string::npos) << h200.source;
  // The replaced model is gone as a whole: its other figures are not mixed in.
  EXPECT_FALSE(t.compute(gpu("NVIDIA H200"), DType::fp8_e4m3).value);
  EXPECT_EQ(t.memory_bandwidth(gpu("NVIDIA RTX PRO 9999")).value, 1800);
  // Models the file does not name stay.
  EXPECT_EQ(t.memory_bandwidth(gpu("NVIDIA H200 NVL")).value, 4800);
}

std::string parse_error(const std::string& text) {
  return test::usage_error([&] { parse_gpu_peaks(text, "bad.json"); });
}

TEST(GpuPeaks, MalformedFilesAreOneLineNamingTheFileAndTheField) {
  const std::string head = R"({"format": "gpuscale-peaks", "version": 1, "models": [)";
  const std::string ok_figs = R"("memory_bandwidth": {"value": 1, "source": "s"}, "compute": {},
      "nvlink": {"value": null, "source": "s"}, "pcie": {"value": 1, "source": "s"})";
  struct Case {
    std::string text, expect;
  } cases[] = {
      {"{", "not valid JSON"},
      {"[]", "expected a JSON object"},
      {R"({"format": "x", "version": 1, "models": []})", "\"format\" must be \"gpuscale-peaks\""},
      {R"({"format": "gpuscale-peaks", "version": 2, "models": []})", "\"version\" must be 1"},
      {R"({"format": "gpuscale-peaks", "version": 1})", "\"models\" must be an array"},
      {head + R"({"names": ["A"], )" + ok_figs + "}]}", "models[0]: 'model' must be a non-empty string"},
      {head + R"({"model": "M", "names": [], )" + ok_figs + "}]}", "models[0] ('M'): 'names' must be a non-empty"},
      {head + R"({"model": "M", "names": ["A"], "pci_device_id": "2335x", )" + ok_figs + "}]}", "'pci_device_id'"},
      {head + R"({"model": "M", "names": ["A"], "compute_capability": 9, )" + ok_figs + "}]}", "'compute_capability'"},
      {head + R"({"model": "M", "names": ["A"], "sm_count": -1, )" + ok_figs + "}]}", "'sm_count'"},
      {head + R"({"model": "M", "names": ["A"], "memory_bandwidth": {"value": -5, "source": "s"}, "compute": {},
        "nvlink": {"value": null, "source": "s"}, "pcie": {"value": 1, "source": "s"}}]})",
       "memory_bandwidth: 'value' must be a positive number or null"},
      {head + R"({"model": "M", "names": ["A"], "memory_bandwidth": {"value": 5}, "compute": {},
        "nvlink": {"value": null, "source": "s"}, "pcie": {"value": 1, "source": "s"}}]})",
       "'source' must be a non-empty string"},
      {head + R"({"model": "M", "names": ["A"], "memory_bandwidth": {"value": 1, "source": "s"},
        "compute": {"bfloat17": {"value": 1, "source": "s"}}, "nvlink": {"value": null, "source": "s"},
        "pcie": {"value": 1, "source": "s"}}]})",
       "compute: unknown dtype 'bfloat17'"},
      {head + R"({"model": "M", "names": ["A"], "memory_bandwidth": {"value": 1, "source": "s"}, "compute": {},
        "pcie": {"value": 1, "source": "s"}}]})",
       "'nvlink' is missing"},
      {head + R"({"model": "M", "names": ["A"], "tdp": 700, )" + ok_figs + "}]}", "unknown field 'tdp'"},
      {head + R"({"model": "M", "names": ["NVIDIA A"], )" + ok_figs + R"(}, {"model": "N", "names": ["A"], )" +
           ok_figs + "}]}",
       "models[1] ('N'): name 'A' is already listed by model 'M'"},
  };
  for (const auto& c : cases) {
    const auto msg = parse_error(c.text);
    EXPECT_NE(msg.find("peaks file bad.json: "), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << "expected '" << c.expect << "' in: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(GpuPeaks, UnreadableFile) {
  try {
    load_gpu_peaks_file("/nonexistent/peaks.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "peaks file /nonexistent/peaks.json: cannot be read: no such file");
  }
}

// The --peaks reader is the strict reader of every input (results/result_io.h): a deeply nested value
// (which crashed dump() in the old message), a key given twice (the last copy used to win silently), a
// device such as /dev/zero (read without end), a directory and an oversized file are each one line
// naming the file and the problem; a model name from the file reaches the message without control
// characters.
TEST(GpuPeaks, HostileFilesAreRefusedByTheStrictReader) {
  std::mt19937 rng(test_seed());
  const int depth = 100 + static_cast<int>(rng() % 100000);
  const std::string deep = R"({"format": "gpuscale-peaks", "version": 1, "models": [{"model": "M", "notes": )" +
                           std::string(depth, '[') + std::string(depth, ']') + "}]}";
  const std::string dup = R"({"format": "gpuscale-peaks", "version": 1, "models": [], "models": []})";
  const std::string ctl = R"({"format": "gpuscale-peaks", "version": 1, "models": [{"model": "\u001b[2J\u009b\n"}]})";
  const auto dir = std::filesystem::temp_directory_path() / ("gpuscale_hostile_peaks_" + std::to_string(rng()));
  std::filesystem::create_directories(dir);
  auto file = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  };
  const std::string big = file("big.json", std::string((1 << 20) + 1 + rng() % 1000, ' '));  // over 1 MiB
  const struct {
    std::string path, expect;
  } cases[] = {
      {file("deep.json", deep), "JSON nested deeper than 64 levels"},
      {file("dup.json", dup), "duplicate key \"models\""},
      {file("ctl.json", ctl), "models[0] ('?[2J?" "?'): 'names' must be"},
      {"/dev/zero", "cannot be read: not a regular file"},
      {dir.string(), "cannot be read: is a directory"},
      {big, "bytes is larger than any file gpuscale writes"},
      {file("empty.json", ""), "cannot be read: empty file"},
  };
  for (const auto& c : cases) {
    std::string msg = "(accepted)";
    try {
      (void)load_gpu_peaks_file(c.path);
    } catch (const Error& e) {
      msg = e.what();
      EXPECT_EQ(e.exit_code(), 2) << msg;
    }
    EXPECT_EQ(msg.rfind("peaks file " + c.path + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << "expected '" << c.expect << "' in: " << msg;
    for (char ch : msg) EXPECT_FALSE(static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) << msg;
    EXPECT_EQ(msg.find("\xC2\x9B"), std::string::npos) << msg;
    EXPECT_LT(msg.size(), 400u);
  }
  std::filesystem::remove_all(dir);
}

TEST(GpuPeaks, TableWithFileFromDisk) {
  const auto path = std::filesystem::temp_directory_path() / "gpuscale_test_peaks.json";
  std::ofstream(path) << kUserFile;
  const auto t = make_gpu_peak_table(path.string());
  EXPECT_EQ(t->memory_bandwidth(gpu("NVIDIA H200")).value, 4700);
  EXPECT_EQ(t->memory_bandwidth(gpu("NVIDIA B200")).value, 7700);
  std::filesystem::remove(path);
  EXPECT_EQ(make_gpu_peak_table("")->memory_bandwidth(gpu("NVIDIA H200")).value, 4800);
}

}  // namespace
}  // namespace gpuscale
