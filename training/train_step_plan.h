#pragma once
// train-step: one training step of a transformer (training/model_spec.h) under a parallel layout
// (training/parallel_layout.h), as the program one rank runs: the GEMMs of its shard of each layer and
// the communication of each pattern, in step order. Pure and unit-tested; harness/benchmarks/
// train_step.cpp runs it through the backend's GEMMs (cuBLASLt, BLAS) and collectives (NCCL, MPI).
//
// Per micro-batch of T = seq x micro_batch tokens, on a layer this rank's pipeline stage holds, with
// its tensor-parallel shard (h = hidden, f = ffn, tp = the TP size):
//   forward   QKV (h -> h/tp + 2 kv/tp), attention scores and weighting (2 GEMMs of seq x seq over
//             head_dim x heads/tp x micro_batch: the same FLOPs as the batched per-head products),
//             output (h/tp -> h), [TP all_reduce of T x h], MLP gate+up (h -> 2f/tp) and down
//             (f/tp -> h), [TP all_reduce]; MoE: router (h -> experts), [EP alltoallv dispatch of
//             T x top_k tokens with the router's Zipf skew], the experts' gate+up and down over the
//             tokens this rank receives, [EP alltoallv combine];
//   backward  each GEMM's input gradient and weight gradient (2 GEMMs, twice the forward's FLOPs), the
//             same TP all_reduces and EP alltoallvs again;
//   FSDP      an all_gather of the layer's parameters before its forward and before its backward, a
//             reduce_scatter of its gradients after the last micro-batch's backward;
//   PP        per micro-batch a sendrecv of T x h activations forward and of their gradients backward
//             between neighbouring stages; 1F1B over m = 2 pp micro-batches, whose bubble is
//             (pp - 1) / m of the compute (Narayanan et al. 2021);
//   DP        one all_reduce of the gradients this rank holds over the ranks holding the same ones
//             (dense: the dp group; experts: the expert data-parallel group);
//   output    the vocabulary projection (h -> vocab/tp) on the last stage.
// The ops run one after another, so every exposed communication is counted once; frameworks overlap
// FSDP prefetch and DP buckets with compute, which this first version does not (docs/training.md).
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/collective_table.h"
#include "kernels/gemm_spec.h"
#include "training/parallel_layout.h"

namespace gpuscale {

// What an op's time counts as in the step's breakdown.
enum class TrainPhase { compute, tp, fsdp, pp, ep, dp };
std::string_view train_phase_name(TrainPhase p);  // "compute", "tp_comm", ...
inline constexpr int kTrainPhases = 6;

struct TrainGemm {
  std::string what;  // "qkv.fwd", "mlp.down.dw", ...
  GemmShape shape;   // column-major, as dp-step's: forward NN, input gradient TN, weight gradient NT
};

struct TrainComm {
  std::string what;  // "tp.all_reduce", "ep.dispatch", ...
  LayoutDim group;
  Collective coll;
  std::uint64_t bytes;  // the collective's requested size (nccl-tests' size column before rounding)
  double skew = 0;      // alltoallv's Zipf exponent
};

// One entry of the program: a GEMM or a communication (an index into the plan's lists).
struct TrainOp {
  bool gemm;
  int index;
  TrainPhase phase;
};

struct TrainStepPlan {
  ModelSpec model;
  ParallelLayout layout;
  int rank = 0;
  int micro_batches = 1;          // m
  std::vector<TrainGemm> gemms;   // distinct shapes
  std::vector<TrainComm> comms;   // distinct operations
  std::vector<TrainOp> program;   // one step, in order
  double gemm_flops = 0;          // this rank's GEMM FLOPs per step
  double tokens_per_step = 0;     // the group's: D x m x T
  double model_flops_per_step = 0;  // the group's: tokens x train_flops_per_token
  double bubble_fraction = 0;     // (pp - 1) / m of the compute
};

// The Zipf exponent of the router's skew over expert-parallel ranks (alltoallv_plan.h).
inline constexpr double kRouterSkew = 1.2;

// `accumulation`: gradient accumulation, the micro-batch passes of one step before its gradients are
// reduced (strong scaling holds the global batch by running accumulation = D_global / D passes on D
// data-parallel ranks): m = accumulation (x 2 pp with a pipeline), the FSDP reduce_scatter and the DP
// all_reduces once per step.
TrainStepPlan make_train_step_plan(const ModelSpec& m, const ParallelLayout& l, int rank, int accumulation = 1);

// Tokens the rank at ep_rank receives in an EP dispatch of `sent` tokens per rank over `ep` ranks.
std::uint64_t expert_tokens_received(std::uint64_t sent, int ep, int ep_rank, std::uint64_t token_bytes);

// Bytes a GPU needs to train the model in this layout, with mixed-precision Adam as the ZeRO paper
// counts it (Rajbhandari et al. 2020): per weight 2 (16-bit) + 2 (gradient) + 12 (fp32 master, m, v)
// = 16 bytes, its share after tp, pp, ep and fsdp; plus the activations kept for the backward pass,
// 34 s b h / tp bytes per layer per micro-batch in flight (Korthikanti et al. 2022 with the attention
// scores recomputed, as FlashAttention does), pp micro-batches in flight on the first stage of 1F1B.
double train_memory_bytes(const ModelSpec& m, const ParallelLayout& l);

// The step's figures from measured times (seconds, the group's: slowest rank).
struct TrainFigures {
  double step_s = 0;              // measured + bubble
  double bubble_s = 0;
  double tokens_per_s = 0;        // the group's
  double tokens_per_s_per_gpu = 0;
  double model_tflops_per_gpu = 0;  // model FLOPs / step / GPUs: MFU's numerator
};
TrainFigures train_figures(const TrainStepPlan& p, double measured_step_s, double compute_s);

}  // namespace gpuscale
