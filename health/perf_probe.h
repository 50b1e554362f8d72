#pragma once
// The short performance checks of `gpuscale health`: a STREAM triad and a GEMM on one device through
// the backend interface (kernels/device.h), each verified and set against the device's expected peak
// (peaks/peaks.h). A few seconds per GPU; the verdict compares the fractions with the thresholds.
#include <cstdint>
#include <optional>

#include "peaks/peaks.h"
#include "health/verdict.h"
#include "kernels/device.h"

namespace gpuscale::health {

struct PerfOptions {
  std::uint64_t array_bytes = 0;           // STREAM bytes per array; 0 = the device's default, at most 1 GiB
  GemmShape gemm_shape{8192, 8192, 8192};  // large enough to reach a GPU's tensor-core peak
  int warmup = 2;
  int reps = 10;
  double max_seconds = 3;                  // per check: fewer repetitions when one takes long
};

// Bandwidth (triad, fp64 where the device has it) then GEMM (bf16 where supported, else fp32, else
// the device's first GEMM type). Never throws: a failure is the result's `error`.
std::vector<PerfResult> run_perf_checks(Device& device, const PeakTable* peaks, const PerfOptions& opts,
                                        std::uint64_t seed);

}  // namespace gpuscale::health
