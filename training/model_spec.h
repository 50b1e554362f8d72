#pragma once
// The model a train-step runs (training/train_step_plan.h): a decoder-only transformer's layer shapes,
// dense or mixture-of-experts, as a preset (with its published source) or a file. Pure data and
// arithmetic: the FLOP count behind MFU and the parameter counts behind the memory estimate.
//
// A layer is attention (grouped-query: `kv_heads` key/value heads of head_dim = hidden / heads) and
// a SwiGLU MLP (gate, up, down: 3 x hidden x ffn), or with `experts` > 0 a router (hidden x experts)
// and `experts` such MLPs of which each token uses `top_k`. The vocabulary's output projection
// (hidden x vocab) runs once per token after the last layer; the embedding lookup costs no FLOPs.
//
// FLOPs per token of one training step (forward + backward = 3 x forward), as PaLM's MFU (Chowdhery
// et al. 2022, appendix B) and Megatron count them:
//   6 x N_active + 12 x layers x hidden x seq
// N_active the weights one token meets: per layer the attention projections, the router and top_k
// experts' MLPs (all of the MLP when dense), and the output projection once. The second term is the
// attention scores and their weighting (QK^T and AV, 2 x 2 x seq x hidden per token per layer in the
// forward pass), counted over the whole sequence as PaLM does (no causal halving).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.h"

namespace gpuscale {

struct ModelSpec {
  std::string name;          // the preset's key, or "file"
  int layers = 0;
  std::uint64_t hidden = 0;  // model width
  std::uint64_t ffn = 0;     // the MLP's inner width (per expert)
  int heads = 0, kv_heads = 0;
  std::uint64_t seq = 0;          // tokens per sequence
  std::uint64_t micro_batch = 0;  // sequences per micro-batch per data-parallel rank
  std::uint64_t vocab = 0;
  DType dtype = DType::bf16;
  int experts = 0, top_k = 0;  // 0: dense
  std::string source;          // where the preset's shapes come from
  std::string layout;          // the parallel layout the preset is published with ("" : any)
  // What --quick and --layers changed (recorded in the row): the preset's own values before it.
  nlohmann::json shrink = nlohmann::json::object();

  bool moe() const { return experts > 0; }
  std::uint64_t head_dim() const { return heads > 0 ? hidden / static_cast<std::uint64_t>(heads) : 0; }
  std::uint64_t tokens_per_micro_batch() const { return seq * micro_batch; }
};

// The presets: "llama3-8b", "llama3-70b", "mixtral-8x7b" (model_presets()).
std::vector<std::string> model_preset_names();
std::optional<ModelSpec> model_preset(std::string_view name);

// A model from a JSON object with the ModelSpec fields (layers, hidden, ffn, heads, kv_heads, seq,
// micro_batch, vocab, dtype, and for MoE experts and top_k). Throws gpuscale::Error (exit 2) naming the
// bad or missing field.
ModelSpec model_from_json(const nlohmann::json& j, const std::string& what);

// Refusals of a shape that cannot be a model: zero sizes, heads that do not divide hidden, kv_heads
// that do not divide heads, top_k outside 1..experts. nullopt when it is one.
std::optional<std::string> model_refusal(const ModelSpec& m);

// --quick: at most 2 layers, width / 16 (hidden, ffn, heads, kv_heads, vocab; at least 1 head), seq 128
// and micro-batch 1, so a step is seconds on a CPU; --layers N: N layers. Each change is recorded in
// `shrink` with the preset's value.
ModelSpec shrink_model(ModelSpec m, bool quick, std::optional<int> layers);

// Weights of one layer: attention projections, router, and the MLP (each expert's, dense: the one).
std::uint64_t attention_params(const ModelSpec& m);
std::uint64_t mlp_params(const ModelSpec& m);  // one MLP: 3 x hidden x ffn
std::uint64_t router_params(const ModelSpec& m);
// Weights one token meets (N_active above), and all of the model's (embedding and output included).
double active_params(const ModelSpec& m);
double total_params(const ModelSpec& m);
// Training FLOPs per token (the formula above).
double train_flops_per_token(const ModelSpec& m);

nlohmann::json model_json(const ModelSpec& m);  // every field, for the row's parameters
// The model of a train-step row's parameters (model_json plus layout, scaling, global_dp): its name and
// shrunk_from kept. Throws gpuscale::Error naming `what` as model_from_json does.
ModelSpec model_from_point(const nlohmann::json& params, const std::string& what);

// A checkpoint of the training state (gpuscale plan, the storage report): every weight in the
// training dtype, and, when that dtype is narrower than fp32, the fp32 master copy, plus Adam's two
// fp32 moments; gradients are not saved. 14 bytes per weight for bf16 and fp16 (2 + 4 + 4 + 4), 12
// for fp32 (4 + 4 + 4). For comparison, MLPerf Storage's Llama 3 8B checkpoint is 105 GB, about 13 bytes
// per weight.
double checkpoint_bytes_per_param(DType dtype);
double checkpoint_bytes(const ModelSpec& m);  // total_params x checkpoint_bytes_per_param

}  // namespace gpuscale
