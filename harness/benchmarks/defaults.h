#pragma once
// Default methodology per plan (thorough or --quick), in one place so `gpuscale list` and the docs
// can state it. Every rank runs identical counts: nothing adapts per rank.
#include "harness/options.h"

namespace gpuscale {

struct Methodology {
  int warmup;
  int reps;
};

inline Methodology kernel_methodology(const RunOptions& o) {
  return {o.warmup.value_or(o.quick ? 1 : 2), o.reps.value_or(o.quick ? 5 : 10)};
}

inline Methodology gemm_methodology(const RunOptions& o) {
  return {o.warmup.value_or(1), o.reps.value_or(o.quick ? 3 : 5)};
}

// Collectives: warm-up operations, timed repetitions, operations per repetition (nccl-tests -w, -n).
struct CollectiveMethodology {
  int warmup;
  int reps;
  int iters;
};

inline CollectiveMethodology collective_methodology(const RunOptions& o) {
  return {o.warmup.value_or(o.quick ? 2 : 5), o.reps.value_or(o.quick ? 3 : 5), o.iters.value_or(o.quick ? 5 : 20)};
}

}  // namespace gpuscale
