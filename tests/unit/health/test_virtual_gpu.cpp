// health/virtual_gpu: NVML's virtualisation mode and a vGPU guest's type read from its name; a row's
// per-GPU peak never scaled by an invented share (MIG slices are not sevenths: an H100's 1, 2, 3, 4 and
// 7-slice instances have 16, 32, 60, 64 and 132 SMs), the instance's own SMs and memory said instead,
// withheld with the reason for a time-sliced one or a mix, unchanged for whole GPUs.
#include <gtest/gtest.h>

#include "health/virtual_gpu.h"

namespace gpuscale::health {
namespace {

TEST(VirtualGpu, ModesAndProfiles) {
  EXPECT_STREQ(virtualization_mode_name(0), "none");
  EXPECT_STREQ(virtualization_mode_name(1), "passthrough");
  EXPECT_STREQ(virtualization_mode_name(2), "vgpu_guest");
  EXPECT_STREQ(virtualization_mode_name(9), "unknown");
  auto v = virtual_gpu("vgpu_guest", "NVIDIA H100XM-1-10C");
  EXPECT_EQ(v.profile, "H100XM-1-10C");
  EXPECT_EQ(v.sharing, "mig");
  EXPECT_EQ(v.slices, 1);
  v = virtual_gpu("vgpu_guest", "GRID A100-3-20C");
  EXPECT_EQ(v.slices, 3);
  v = virtual_gpu("vgpu_guest", "NVIDIA H100XM-40C");
  EXPECT_EQ(v.sharing, "time_sliced");
  EXPECT_FALSE(v.slices);
  v = virtual_gpu("vgpu_guest", "NVIDIA H100 80GB HBM3");  // a name that is no vGPU type
  EXPECT_EQ(v.sharing, "");
  v = virtual_gpu("passthrough", "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(v.profile, "");
  EXPECT_EQ(virtual_gpu("vgpu_guest", "X-9-10C").sharing, "");  // 9 slices: not a MIG profile
}

TEST(VirtualGpu, PeakFollowsTheShare) {
  const ExpectedPeak h100{989.0, "built-in table: H100 SXM bf16 dense"};
  // Whole GPUs: nothing changes, no flag.
  auto s = vgpu_peak_share({virtual_gpu("none", "NVIDIA H100"), virtual_gpu("passthrough", "NVIDIA H100")});
  EXPECT_TRUE(s.flag.empty());
  EXPECT_EQ(*shared_peak(h100, s).value, 989.0);
  // MIG-backed vGPUs of one profile: no share is invented. A peak found for them was found by the vGPU
  // type's own name (a user's peaks file): it is the instance's, kept as it is. The table's peaks are
  // whole GPUs', which a vGPU name never matches: unknown, and the row says the instance's own size.
  auto two = virtual_gpu("vgpu_guest", "NVIDIA H100XM-2-20C");
  two.sm_count = 32;
  two.memory_bytes = 20ULL << 30;
  s = vgpu_peak_share({two, two});
  EXPECT_NE(s.flag.find("measured on a vGPU (H100XM-2-20C: 32 SMs, 20 GiB)"), std::string::npos) << s.flag;
  auto p = shared_peak({282.0, "peaks file: H100XM-2-20C bf16"}, s);
  EXPECT_DOUBLE_EQ(*p.value, 282.0) << "a vGPU's own peak is not scaled again";
  p = shared_peak({std::nullopt, "no entry for NVIDIA H100XM-2-20C"}, s);
  EXPECT_FALSE(p.value);
  EXPECT_NE(p.source.find("no share of a whole GPU's peak is taken"), std::string::npos) << p.source;
  EXPECT_NE(p.source.find("32 SMs, 20 GiB"), std::string::npos) << p.source;
  // Time-sliced: withheld, with why.
  s = vgpu_peak_share({virtual_gpu("vgpu_guest", "NVIDIA H100XM-40C")});
  p = shared_peak(h100, s);
  EXPECT_FALSE(p.value);
  EXPECT_NE(p.source.find("withheld: the vGPU H100XM-40C shares the GPU with other virtual machines in turns"),
            std::string::npos)
      << p.source;
  // A mix of whole GPUs and slices: withheld.
  s = vgpu_peak_share({virtual_gpu("none", "NVIDIA H100"), virtual_gpu("vgpu_guest", "NVIDIA H100XM-1-10C")});
  EXPECT_FALSE(shared_peak(h100, s).value);
  // An unknown peak stays unknown with its own reason.
  EXPECT_EQ(shared_peak({std::nullopt, "no peaks table loaded"}, s).source, "no peaks table loaded");
}

TEST(VirtualGpu, FromTheResultFilesRankEntry) {
  const nlohmann::json rank = {{"telemetry", {{"gpu", {{"name", "NVIDIA H100XM-1-10C"}, {"virtualization_mode", "vgpu_guest"},
                                                       {"sm_count", 16}, {"memory_bytes", 10737418240ULL}}}}}};
  EXPECT_EQ(virtual_gpu_of(rank).sharing, "mig");
  EXPECT_EQ(virtual_gpu_of(rank).sm_count, 16);
  EXPECT_EQ(virtual_gpu_of(rank).memory_bytes, 10737418240ULL);
  EXPECT_EQ(virtual_gpu_of(nlohmann::json::object()).mode, "");
  EXPECT_EQ(virtual_gpu_of({{"telemetry", {{"status", "unavailable"}}}}).mode, "");
}

}  // namespace
}  // namespace gpuscale::health
