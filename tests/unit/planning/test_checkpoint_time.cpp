// planning/checkpoint_time: each training preset's checkpoint time at a write bandwidth, as the
// checkpoint.write rows carry it (preset_checkpoint_s): every preset, its checkpoint's bytes over the
// bandwidth, at random bandwidths.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "planning/checkpoint_time.h"
#include "training/model_spec.h"

namespace gpuscale {
namespace {

TEST(CheckpointTime, EveryPresetItsBytesOverTheBandwidth) {
  std::mt19937_64 gen(28);
  std::uniform_real_distribution<double> log_bw(6, 12);  // 1 MB/s to 1 TB/s
  for (int t = 0; t < 50; ++t) {
    const double bw = std::pow(10.0, log_bw(gen));
    const auto presets = preset_checkpoint_seconds(bw);
    ASSERT_EQ(presets.size(), model_preset_names().size());
    for (const auto& name : model_preset_names()) {
      ASSERT_TRUE(presets.contains(name)) << name;
      EXPECT_DOUBLE_EQ(presets[name].get<double>(), checkpoint_bytes(*model_preset(name)) / bw) << name;
      EXPECT_GT(presets[name].get<double>(), 0);
    }
  }
}

TEST(CheckpointTime, TwiceTheBandwidthHalfTheTime) {
  const auto slow = preset_checkpoint_seconds(1e9), fast = preset_checkpoint_seconds(2e9);
  for (const auto& name : model_preset_names()) EXPECT_DOUBLE_EQ(slow[name].get<double>(), 2 * fast[name].get<double>()) << name;
}

}  // namespace
}  // namespace gpuscale
