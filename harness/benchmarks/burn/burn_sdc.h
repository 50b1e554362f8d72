#pragma once
// A burn-in window's silent-data-corruption check (docs/acceptance.md): every rank's GEMM output digest
// gathered over the group and judged by harness/benchmarks/burn/sdc_agreement.h. A rank that disagrees with its class's
// majority has its window made invalid, naming the first element where its output differs.
#include "harness/benchmark.h"
#include "kernels/device.h"

namespace gpuscale {

// Sets out.metrics sdc ("agrees", "disagrees", "no majority", "not compared"), sdc_agreeing,
// sdc_compared and, when it disagrees, sdc_block, sdc_elements (the block's range), sdc_element (the
// first element that differs, narrowed by harness/benchmarks/burn/sdc_agreement.h) and sdc_at ([row, column] of C,
// whose leading dimension is `rows`); every member of `group` calls it.
void check_output_agreement(RankMeasurement& out, GemmProblem& problem, const Group& group, std::uint64_t rows);

}  // namespace gpuscale
