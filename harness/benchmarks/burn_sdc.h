#pragma once
// A burn-in window's silent-data-corruption check (docs/acceptance.md): every rank's GEMM output digest
// gathered over the group and judged by harness/sdc_agreement.h. A rank that disagrees with its class's
// majority has its window made invalid, naming where its output first differs.
#include "harness/benchmark.h"
#include "kernels/device.h"

namespace gpuscale {

// Sets out.metrics sdc ("agrees", "disagrees", "no majority", "not compared"), sdc_agreeing,
// sdc_compared and, when it disagrees, sdc_block and sdc_elements; every member of `group` calls it.
void check_output_agreement(RankMeasurement& out, GemmProblem& problem, const Group& group);

}  // namespace gpuscale
