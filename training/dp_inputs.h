#pragma once
// The dp-step's input values, shared by the host and the CUDA kernels (C++17, GPUSCALE_HD).
#include <cstdint>

#include "core/random.h"

namespace gpuscale {

// Element `index` of an input array, before rounding to the dtype. Weights are the same on every rank
// (replicas), scaled by sqrt(3 / width) so activations keep their magnitude through the layers;
// the samples X_0 and the loss gradient G_depth differ per rank, so the gradients summed across ranks
// are not a multiple of one rank's.
enum class DpInput : std::uint64_t { weight = 0x64770000, sample = 0x64780000, loss_grad = 0x64790000 };
GPUSCALE_HD inline double dp_input_value(std::uint64_t seed, DpInput which, int layer_or_rank, std::uint64_t index,
                                         double weight_scale) {
  const std::uint64_t stream = static_cast<std::uint64_t>(which) + static_cast<std::uint64_t>(layer_or_rank);
  const double u = random_uniform(seed, stream, index, -1.0, 1.0);
  return which == DpInput::weight ? u * weight_scale : u;
}

}  // namespace gpuscale
