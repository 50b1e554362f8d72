#pragma once
// How long a cuBLASLt product lasts on the model: at the GPU's dense peak for the element type
// (peaks/gpus.json's figure, GpuModel::tflops) times the stated fraction a large GEMM reaches
// (GpuModel::gemm_efficiency), with no kernel floor, unlike the core's compute_us (core/cost.h) for the
// project's own kernels; the e2e oracles (gemm, dp-step, train-step) are written to this rule.
#include <string>

#include "tests/emulated_gpu/core/gpu_model.h"

namespace gpuscale_emu::lt {

// Microseconds for `flops` floating-point (or integer) operations at the peak named `peak_key`; a
// type the model has no figure for runs at its fp32 rate. 0 when the model has neither.
inline double gemm_compute_us(const GpuModel& model, const std::string& peak_key, double flops) {
  double tflops = 0;
  if (auto it = model.tflops.find(peak_key); it != model.tflops.end()) tflops = it->second;
  if (tflops <= 0)
    if (auto it = model.tflops.find("fp32"); it != model.tflops.end()) tflops = it->second;
  if (tflops <= 0 || model.gemm_efficiency <= 0) return 0;
  return flops / (tflops * 1e12 * model.gemm_efficiency) * 1e6;
}

}  // namespace gpuscale_emu::lt
