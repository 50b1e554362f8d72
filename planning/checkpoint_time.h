#pragma once
// A training checkpoint's time at a measured write bandwidth (docs/capacity.md): what a storage
// benchmark's write row says of each training preset (its `preset_checkpoint_s`). Planning's own
// question, asked of a measurement: the checkpoint.write benchmark measures the bandwidth and hands it
// here, so the storage driver knows nothing of models. Pure.
#include <nlohmann/json.hpp>

namespace gpuscale {

// {preset name: seconds} for every training preset (training/model_spec.h's model_preset_names): its
// checkpoint (checkpoint_bytes) written at `bytes_per_s` (> 0), bytes over bandwidth.
nlohmann::json preset_checkpoint_seconds(double bytes_per_s);

}  // namespace gpuscale
