#pragma once
// dp-step: one data-parallel training step of an MLP-like model, as frameworks run it (PyTorch DDP is
// the model). Every rank holds the same `depth` weights of width x width and its own `batch` samples;
// the step runs the forward GEMMs, then the backward GEMMs from the last layer to the first (per layer
// the weight gradient dW, then the input gradient dX, which the first layer skips), and all-reduces
// the weight gradients in buckets on a second stream: a bucket is launched as soon as the dW of its
// last layer is done, so communication overlaps the remaining backward GEMMs. Buckets are filled in
// reverse layer order up to `bucket_bytes` and never split a layer (DDP's bucket_cap_mb rule).
//
// Matrices are column-major (cuBLAS): activations X_l and output gradients G_l are width x batch
// (one sample per column), weights W_l and their gradients dW_l width x width. Layer l computes
//   forward      X_{l+1} = W_l X_l           (m = width, n = batch, k = width, NN)
//   weight grad  dW_l    = G_{l+1} X_l^T     (m = width, n = width, k = batch, NT)
//   input grad   G_l     = W_l^T G_{l+1}     (m = width, n = batch, k = width, TN)
// G_depth, the loss gradient, is an input. No activation functions or optimizer: their memory-bound
// work is not what the benchmark is about.
//
// This file is the plan both backends execute (pure, unit-tested) and the interface they implement
// (training/cpu: BLAS + MPI_Iallreduce; training/cuda: cuBLASLt + NCCL on a communication stream).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.h"
#include "training/dp_inputs.h"
#include "kernels/device.h"
#include "kernels/gemm_spec.h"

namespace gpuscale {

struct DpStepConfig {
  DType dtype = DType::fp32;
  std::uint64_t width = 0;         // d
  int depth = 0;                   // layers
  std::uint64_t batch = 0;         // samples per rank per step
  std::uint64_t bucket_bytes = 0;  // gradient bucket cap
};

// Which array a GEMM operand is.
enum class DpArray {
  weight,       // W_l (layer l)
  activation,   // X_l (l = 0 .. depth)
  grad_output,  // G_l (l = 1 .. depth; G_depth is the loss gradient)
  weight_grad,  // dW_l, inside the flat gradient buffer
};

struct DpOperand {
  DpArray array;
  int index;  // layer (weight, weight_grad) or activation/gradient number
};

enum class DpGemmKind { forward, weight_grad, input_grad };

struct DpGemm {
  DpGemmKind kind;
  int layer;
  GemmShape shape;  // column-major, with the transposes
  DpOperand a, b, c;
};

struct DpBucket {
  std::vector<int> layers;         // in the order their gradients become ready (descending)
  std::uint64_t offset_elems = 0;  // start in the flat gradient buffer
  std::uint64_t elems = 0;
};

// One entry of the step's program, in issue order.
struct DpOp {
  enum Kind { gemm, all_reduce } kind;
  int index;  // into DpPlan::gemms or DpPlan::buckets
};

struct DpPlan {
  DpStepConfig config;
  std::vector<DpGemm> gemms;                // forward then backward, in issue order
  std::vector<DpBucket> buckets;            // in launch order
  std::vector<DpOp> program;                // gemms, and each bucket's all-reduce right after its last dW
  std::vector<std::uint64_t> grad_offset;   // per layer: element offset of dW_l in the gradient buffer
  std::uint64_t gradient_elems = 0;         // width^2 x depth
  double flops_per_step = 0;                // per rank
};

// Throws gpuscale::Error (exit 2) naming the bad field: zero sizes, a dimension beyond the 32-bit
// BLAS interface, a dtype the step cannot run.
DpPlan make_dp_plan(const DpStepConfig& c);

// DDP's bucket rule: layers in reverse order, a new bucket when the next layer would pass the cap
// (a layer larger than the cap gets a bucket of its own). Laid out so each bucket is contiguous.
std::vector<DpBucket> dp_buckets(int depth, std::uint64_t layer_elems, std::uint64_t element_size,
                                 std::uint64_t bucket_bytes);

// Bytes a rank allocates for the step: weights, activations X_0..X_depth, output gradients G_1..G_depth
// and the gradient buffer (the CUDA backend adds its GEMM workspace).
std::uint64_t dp_memory_bytes(const DpStepConfig& c);
// FLOPs of one sample's pass through the step: 2 d^2 per GEMM per sample, (3 depth - 1) GEMMs.
double dp_flops_per_sample(const DpStepConfig& c);

double dp_weight_scale(std::uint64_t width);

// ---- timing and results --------------------------------------------------------------------------

enum class DpMode {
  full,          // GEMMs and the bucketed all-reduces, overlapped: the training step
  compute_only,  // the same GEMMs without communication
  comm_only,     // the all-reduces alone, back to back
};

// Figures of one point, from the ranks' times reduced across the group (the step of a synchronous
// data-parallel job ends when its slowest rank's does: max).
struct DpFigures {
  double step_s = 0, compute_s = 0, comm_s = 0;
  double exposed_comm_s = 0;   // step - compute, at least 0: communication the GEMMs did not hide
  double overlap = 0;          // 1 - exposed / comm (0..1; 1 when there is no communication)
  double samples_per_s = 0;    // the group's: k x batch / step
  double tflops = 0;           // the group's model TFLOP/s
};
DpFigures dp_figures(const DpPlan& plan, int ranks, double step_s, double compute_s, double comm_s);

// ---- verification ---------------------------------------------------------------------------------

// The entries of each GEMM's output a verified step samples: the corners and `count` random ones.
std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> dp_sample_points(const DpPlan& plan,
                                                                                    std::uint64_t seed,
                                                                                    std::size_t count);

// One sampled output entry with the k products' inputs as stored: op(A)[i][0..k), op(B)[0..k)[j], and
// C[i][j] right after the GEMM (for dW: before the all-reduce overwrote it).
struct DpGemmSample {
  int gemm = 0;
  std::uint64_t row = 0, col = 0;
  std::vector<double> a, b;
  double c = 0;
};
// Every sample against check_gemm_entry's tolerance.
CheckResult dp_check_gemms(const DpPlan& plan, const std::vector<DpGemmSample>& samples);

// The all-reduce: `local[r * P + p]` is rank r's dW entry p before the all-reduce (every rank's,
// gathered), `reduced[p]` this rank's entry after it. The sum of n values in the dtype may round at
// every addition: |reduced - sum| <= (n + 1) u sum |local| + n s_min.
CheckResult dp_check_all_reduce(DType dtype, int nranks, const std::vector<double>& local,
                                const std::vector<double>& reduced);

// Both checks of a verified step, merged (the first failure's detail is kept).
CheckResult dp_check_step(const DpPlan& plan, const std::vector<DpGemmSample>& samples, int nranks,
                          const std::vector<double>& local, const std::vector<double>& reduced);

// ---- the interface the backends implement ----------------------------------------------------------

class DpStep {
 public:
  virtual ~DpStep() = default;
  // Seconds per step over `steps` steps in `mode`, timed like the collectives: group barrier, host
  // clock, the steps issued back to back, one wait at the end.
  virtual double time(DpMode mode, int steps) = 0;
  // One full step with its samples gathered (untimed): GEMM entries and the all-reduce checked.
  virtual CheckResult verify() = 0;
  // How the backend ran it (GEMM library and algorithms, transport).
  virtual nlohmann::json details() const { return nlohmann::json::object(); }
};

}  // namespace gpuscale
