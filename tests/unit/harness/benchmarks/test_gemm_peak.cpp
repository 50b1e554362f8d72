// The GEMM row's expected peak (harness/benchmarks/gemm.cpp): fp8 is judged against the datasheet's
// figure only in the mode that figure is quoted for (fast accumulation); the other mode says why not.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness/registry.h"
#include "peaks/gpu_peaks.h"

namespace gpuscale {
namespace {

ExpectedPeak gemm_peak(const std::string& dtype, std::optional<bool> fast_accum) {
  static const GpuPeakTable table(parse_gpu_peaks(builtin_gpu_peaks_text(), "built-in peaks"), {});
  DeviceInfo h200;
  h200.backend = "cuda";
  h200.name = "NVIDIA H200";
  nlohmann::json p = {{"dtype", dtype}, {"m", 8192}, {"n", 8192}, {"k", 8192}, {"layout", "TN"}};
  if (fast_accum) p["fast_accum"] = *fast_accum;
  const LinkPeaks links;
  return registry().find("gemm")->expected_peak(p, PeakContext{h200, &table, links}, "single");
}

TEST(GemmPeak, Fp8IsJudgedOnlyInTheModeItsPeakIsQuotedFor) {
  const auto fast = gemm_peak("fp8_e4m3", true);
  ASSERT_TRUE(fast.value) << fast.source;
  EXPECT_NEAR(*fast.value, 1979, 1);  // the H200 datasheet's 3958 sparse, halved
  const auto exact = gemm_peak("fp8_e4m3", false);
  EXPECT_FALSE(exact.value);
  EXPECT_NE(exact.source.find("quoted with fast accumulation"), std::string::npos) << exact.source;
  EXPECT_NE(exact.source.find("1979"), std::string::npos) << exact.source;
  // A file from before the parameter: without fast accumulation, so no peak either.
  EXPECT_FALSE(gemm_peak("fp8_e4m3", std::nullopt).value);
  // Types without the mode keep their peak.
  const auto bf16 = gemm_peak("bf16", std::nullopt);
  ASSERT_TRUE(bf16.value);
  EXPECT_NEAR(*bf16.value, 989.5, 1);
}

}  // namespace
}  // namespace gpuscale
