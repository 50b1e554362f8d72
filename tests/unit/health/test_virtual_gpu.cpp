// health/virtual_gpu: NVML's virtualisation mode and a vGPU guest's type read from its name; a row's
// per-GPU peak scaled by a MIG-backed profile's share, withheld with the reason for a time-sliced one
// or a mix, unchanged for whole GPUs (bare metal, pass-through).
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
  ASSERT_TRUE(v.share);
  EXPECT_DOUBLE_EQ(*v.share, 1.0 / 7);
  v = virtual_gpu("vgpu_guest", "GRID A100-3-20C");
  EXPECT_DOUBLE_EQ(*v.share, 3.0 / 7);
  v = virtual_gpu("vgpu_guest", "NVIDIA H100XM-40C");
  EXPECT_EQ(v.sharing, "time_sliced");
  EXPECT_FALSE(v.share);
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
  // MIG-backed vGPUs of one profile: the peak times 2/7, said in its source.
  s = vgpu_peak_share({virtual_gpu("vgpu_guest", "NVIDIA H100XM-2-20C"), virtual_gpu("vgpu_guest", "NVIDIA H100XM-2-20C")});
  EXPECT_NE(s.flag.find("measured on a vGPU (H100XM-2-20C)"), std::string::npos) << s.flag;
  auto p = shared_peak(h100, s);
  EXPECT_DOUBLE_EQ(*p.value, 989.0 * 2 / 7);
  EXPECT_NE(p.source.find("the vGPU profile's share"), std::string::npos);
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
  const nlohmann::json rank = {{"telemetry", {{"gpu", {{"name", "NVIDIA H100XM-1-10C"}, {"virtualization_mode", "vgpu_guest"}}}}}};
  EXPECT_EQ(virtual_gpu_of(rank).sharing, "mig");
  EXPECT_EQ(virtual_gpu_of(nlohmann::json::object()).mode, "");
  EXPECT_EQ(virtual_gpu_of({{"telemetry", {{"status", "unavailable"}}}}).mode, "");
}

}  // namespace
}  // namespace gpuscale::health
