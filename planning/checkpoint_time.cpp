#include "planning/checkpoint_time.h"

#include "training/model_spec.h"

namespace gpuscale {

nlohmann::json preset_checkpoint_seconds(double bytes_per_s) {
  nlohmann::json presets = nlohmann::json::object();
  for (const auto& name : model_preset_names())
    if (const auto model = model_preset(name)) presets[name] = checkpoint_bytes(*model) / bytes_per_s;
  return presets;
}

}  // namespace gpuscale
