#pragma once
// Default methodology per plan (thorough or --quick), in one place so `gpuscale list` and the docs
// can state it. Every rank runs identical counts: nothing adapts per rank.
#include <string>

#include "harness/options/options.h"
#include "training/dp_step.h"

namespace gpuscale {

struct Methodology {
  int warmup;
  int reps;
};

inline Methodology kernel_methodology(const RunOptions& o) {
  return {o.warmup.value_or(o.quick ? 1 : 2), o.reps.value_or(o.quick ? 5 : 10)};
}

// Checkpoints: no warm-up (a checkpoint is written cold), a few whole shards (each is seconds at scale).
inline Methodology checkpoint_methodology(const RunOptions& o) { return {o.warmup.value_or(0), o.reps.value_or(3)}; }

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

// dp-step: warm-up steps, timed repetitions, steps per repetition (-n).
struct DpMethodology {
  int warmup;
  int reps;
  int steps;
};

inline DpMethodology dp_methodology(const RunOptions& o) {
  return {o.warmup.value_or(o.quick ? 1 : 3), o.reps.value_or(o.quick ? 3 : 5), o.iters.value_or(o.quick ? 2 : 10)};
}

// dp-step's model: on CUDA a realistic one (width 8192, 4 layers: 512 MiB of bf16 gradients, 8192
// samples per GPU, DDP's 25 MiB buckets); on the CPU a small one (2 layers per bucket, so the
// all-reduces overlap the remaining GEMMs); --quick smaller still. Flags override each field.
inline DpStepConfig dp_step_config(const RunOptions& o, const std::string& backend, DType dtype) {
  const bool cpu = backend == "cpu";
  DpStepConfig c;
  c.dtype = dtype;
  c.width = o.dp_width.value_or(cpu ? (o.quick ? 256 : 1024) : (o.quick ? 4096 : 8192));
  c.depth = o.dp_depth.value_or(4);
  c.batch = o.dp_batch.value_or(cpu ? (o.quick ? 64 : 256) : (o.quick ? 4096 : 8192));
  c.bucket_bytes = o.dp_bucket.value_or(cpu ? (o.quick ? (512ULL << 10) : (8ULL << 20)) : (25ULL << 20));
  return c;
}

}  // namespace gpuscale
