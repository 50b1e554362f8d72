#pragma once
// How a train-step's GPUs divide the model (training/train_step_plan.h): data parallel (dp), fully
// sharded data parallel (fsdp, ZeRO-3), tensor parallel (tp), pipeline parallel (pp) and expert
// parallel (ep). Pure: parsing, the refusals, and each rank's place in each group.
//
// Text: a comma list of `dp`, `fsdp`, `tp=K`, `pp=K`, `ep=K`, `dp=K`, `fsdp=K`. tp and pp are fixed
// sizes; dp or fsdp without a number takes the GPUs the fixed sizes leave (at most one of them grows;
// naming neither, dp does), so one layout measures at every GPU count it divides: "tp=2" is tp 2 and
// dp = n / 2 at n GPUs. ep is carved out of the data-parallel ranks (dp x fsdp), as Megatron-LM and
// DeepSpeed-MoE place experts: it must divide them, and the experts must divide by it.
//
// Rank order, as Megatron-LM's default (tp fastest, pp slowest): rank = tp_rank + tp x (d + D x pp_rank)
// with d = fsdp_rank + fsdp x dp_rank the rank's data-parallel index and D = dp x fsdp, so a TP group
// is consecutive ranks (one node when tp fits one) and the EP group ep consecutive data-parallel ranks.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "training/model_spec.h"

namespace gpuscale {

struct LayoutSpec {
  int tp = 1, pp = 1, ep = 1;
  int dp = 0, fsdp = 1;  // 0: this one grows (exactly one of dp and fsdp is 0)
  std::string text() const;  // canonical: "dp", "fsdp", "tp=2", "pp=2,fsdp", "ep=4"
  int fixed_product() const;  // the GPUs one replica of the fixed sizes takes
};

// Parses the text; nullopt with `why` on anything else (an unknown name, a size below 1 or above 65536,
// a name twice, dp and fsdp both growing or both fixed).
std::optional<LayoutSpec> parse_layout(std::string_view text, std::string& why);

// The layout at n GPUs.
struct ParallelLayout {
  int dp = 1, fsdp = 1, tp = 1, pp = 1, ep = 1;
  int gpus() const { return dp * fsdp * tp * pp; }
  int data_parallel() const { return dp * fsdp; }  // D: the ranks holding the same layers' shard
};
// nullopt where the layout does not fit n GPUs (the fixed sizes do not divide n, or ep does not divide
// dp x fsdp there).
std::optional<ParallelLayout> resolve_layout(const LayoutSpec& spec, int n);

// Why a layout cannot run this model on this launch, or nullopt. `largest` is the launch's GPU count,
// `gpus_per_node` the fewest GPUs a node of it has.
//  - the fixed sizes must divide the launch's GPU count;
//  - tp must fit in a node (tensor parallelism's all-reduces sit on every layer's critical path);
//  - ep needs an MoE model and must divide its experts, and some GPU count must hold it;
//  - tp must divide the heads, KV heads (or be a multiple of them), the MLP width and the vocabulary,
//    and pp the layers.
std::optional<std::string> layout_refusal(const LayoutSpec& spec, const ModelSpec& model, int largest,
                                          int gpus_per_node);

// The groups a rank belongs to at a resolved layout.
// expert_dp: the ranks holding the same experts (same ep_rank, D / ep of them), whose expert gradients
// are reduced together.
enum class LayoutDim { tp, fsdp, dp, ep, expert_dp, pp };
struct LayoutPlace {
  int tp_rank = 0, fsdp_rank = 0, dp_rank = 0, ep_rank = 0, pp_rank = 0;
};
LayoutPlace layout_place(const ParallelLayout& l, int rank);
// The colour of rank's group along `dim` (ranks of one group share it; Group(parent, colour, key)) and
// its rank in that group.
int layout_colour(const ParallelLayout& l, int rank, LayoutDim dim);
int layout_group_rank(const ParallelLayout& l, int rank, LayoutDim dim);
int layout_group_size(const ParallelLayout& l, LayoutDim dim);

}  // namespace gpuscale
