#include "training/train_step_plan.h"

#include <array>
#include <cmath>
#include <stdexcept>

#include "collectives/alltoallv_plan.h"
#include "core/dtype.h"

namespace gpuscale {
namespace {

using u64 = std::uint64_t;

constexpr std::array<std::string_view, kTrainPhases> kPhaseNames = {"compute", "tp_comm", "fsdp_comm",
                                                                     "pp_comm", "ep_comm", "dp_comm"};

// Builds one rank's program, keeping each distinct GEMM shape and communication once.
struct Builder {
  TrainStepPlan& p;

  void gemm(const std::string& what, u64 m, u64 n, u64 k, bool ta, bool tb) {
    if (m == 0 || n == 0 || k == 0) return;  // a rank that receives no tokens has no expert GEMM
    GemmShape s;
    s.m = m, s.n = n, s.k = k, s.trans_a = ta, s.trans_b = tb;
    s = gemm_shape_for(p.model.dtype, s);  // the model's layout, or TN where the type's tensor cores take only TN
    int at = -1;
    for (std::size_t i = 0; i < p.gemms.size() && at < 0; ++i) {
      const auto& g = p.gemms[i].shape;
      if (g.m == s.m && g.n == s.n && g.k == s.k && g.trans_a == s.trans_a && g.trans_b == s.trans_b) at = static_cast<int>(i);
    }
    if (at < 0) {
      at = static_cast<int>(p.gemms.size());
      p.gemms.push_back({what, s});
    }
    p.program.push_back({true, at, TrainPhase::compute});
    p.gemm_flops += 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }

  // A linear layer in -> out over `tokens` columns: forward Y = W X, or backward dX = W^T dY and dW = dY X^T.
  void linear(const std::string& what, u64 in, u64 out, u64 tokens, bool backward) {
    if (!backward) return gemm(what + ".fwd", out, tokens, in, false, false);
    gemm(what + ".dx", in, tokens, out, true, false);
    gemm(what + ".dw", out, in, tokens, false, true);
  }

  void comm(const std::string& what, LayoutDim group, Collective coll, u64 bytes, TrainPhase phase, double skew = 0) {
    if (layout_group_size(p.layout, group) < 2 || bytes == 0) return;
    int at = -1;
    for (std::size_t i = 0; i < p.comms.size() && at < 0; ++i) {
      const auto& c = p.comms[i];
      if (c.what == what && c.group == group && c.coll == coll && c.bytes == bytes && c.skew == skew) at = static_cast<int>(i);
    }
    if (at < 0) {
      at = static_cast<int>(p.comms.size());
      p.comms.push_back({what, group, coll, bytes, skew});
    }
    p.program.push_back({false, at, phase});
  }
};

u64 local_kv(const ModelSpec& m, int tp) {
  const u64 kv = static_cast<u64>(m.kv_heads) * m.head_dim();
  return m.kv_heads % tp == 0 ? kv / static_cast<u64>(tp) : m.head_dim();  // replicated when tp > kv heads
}

// Weights of one layer this rank gathers with FSDP: all of its TP shard but experts sharded by EP.
u64 fsdp_layer_params(const ModelSpec& m, const ParallelLayout& l) {
  const u64 tp = static_cast<u64>(l.tp);
  u64 w = attention_params(m) / tp + router_params(m);
  if (!m.moe()) w += mlp_params(m) / tp;
  else if (l.ep == 1) w += static_cast<u64>(m.experts) * mlp_params(m) / tp;
  return w;
}

u64 expert_params_local(const ModelSpec& m, const ParallelLayout& l) {
  if (!m.moe() || l.ep == 1) return 0;
  return static_cast<u64>(m.layers / l.pp) * static_cast<u64>(m.experts / l.ep) * (mlp_params(m) / static_cast<u64>(l.tp));
}

// One layer's forward or backward on this rank (backward: the GEMMs in reverse order).
void layer(Builder& b, const ModelSpec& m, const ParallelLayout& l, int ep_rank, bool backward) {
  const u64 es = dtype_size(m.dtype), tp = static_cast<u64>(l.tp), h = m.hidden, t = m.tokens_per_micro_batch();
  const u64 heads = static_cast<u64>(m.heads) / tp, core_k = m.head_dim() * heads * m.micro_batch;
  auto attention = [&] {
    if (!backward) {
      b.linear("attn.qkv", h, h / tp + 2 * local_kv(m, l.tp), t, false);
      b.gemm("attn.scores.fwd", m.seq, m.seq, core_k, false, false);
      b.gemm("attn.scores.fwd", m.seq, m.seq, core_k, false, false);  // the weighting: the same FLOPs
      b.linear("attn.out", h / tp, h, t, false);
    } else {
      b.linear("attn.out", h / tp, h, t, true);
      for (int i = 0; i < 2; ++i) {  // weighting, then scores: two gradients of the same FLOPs each
        b.gemm("attn.scores.dx", m.seq, core_k, m.seq, false, true);
        b.gemm("attn.scores.dw", core_k, m.seq, m.seq, true, false);
      }
      b.linear("attn.qkv", h, h / tp + 2 * local_kv(m, l.tp), t, true);
    }
    b.comm("tp.all_reduce", LayoutDim::tp, Collective::all_reduce, t * h * es, TrainPhase::tp);
  };
  auto mlp = [&] {
    if (!m.moe()) {
      auto up = [&] { b.linear("mlp.gate_up", h, 2 * m.ffn / tp, t, backward); };
      auto down = [&] { b.linear("mlp.down", m.ffn / tp, h, t, backward); };
      backward ? (down(), up()) : (up(), down());
    } else {
      const u64 sent = t * static_cast<u64>(m.top_k);
      const u64 got = l.ep > 1 ? expert_tokens_received(sent, l.ep, ep_rank, h * es) : sent;
      const u64 bytes = sent * h * es;
      auto router = [&] { b.linear("moe.router", h, static_cast<u64>(m.experts), t, backward); };
      auto experts = [&] {
        auto up = [&] { b.linear("moe.expert.gate_up", h, 2 * m.ffn / tp, got, backward); };
        auto down = [&] { b.linear("moe.expert.down", m.ffn / tp, h, got, backward); };
        backward ? (down(), up()) : (up(), down());
      };
      // The combine returns what the dispatch sent, the hottest rank's link carrying the same bytes the
      // other way: timed as the dispatch's pattern.
      if (!backward) router();
      b.comm(backward ? "ep.combine" : "ep.dispatch", LayoutDim::ep, Collective::alltoallv, bytes, TrainPhase::ep, kRouterSkew);
      experts();
      b.comm(backward ? "ep.dispatch" : "ep.combine", LayoutDim::ep, Collective::alltoallv, bytes, TrainPhase::ep, kRouterSkew);
      if (backward) router();
    }
    b.comm("tp.all_reduce", LayoutDim::tp, Collective::all_reduce, t * h * es, TrainPhase::tp);
  };
  b.comm("fsdp.all_gather", LayoutDim::fsdp, Collective::all_gather, fsdp_layer_params(m, l) * es, TrainPhase::fsdp);
  backward ? (mlp(), attention()) : (attention(), mlp());
}

}  // namespace

std::string_view train_phase_name(TrainPhase p) { return kPhaseNames[static_cast<std::size_t>(p)]; }

u64 expert_tokens_received(u64 sent, int ep, int ep_rank, u64 token_bytes) {
  const auto c = alltoallv_counts(sent * token_bytes, AlltoallvSkew{kRouterSkew, {}}, 1, ep);  // bytes, rounded to 16
  const auto block = alltoallv_block(c, 1, ep_rank, ep);
  return block.per * static_cast<u64>(ep) / token_bytes;
}

TrainStepPlan make_train_step_plan(const ModelSpec& m, const ParallelLayout& l, int rank, int accumulation) {
  if (accumulation < 1) throw std::invalid_argument("make_train_step_plan: accumulation below 1");
  TrainStepPlan p;
  p.model = m;
  p.layout = l;
  p.rank = rank;
  p.micro_batches = (l.pp > 1 ? 2 * l.pp : 1) * accumulation;
  p.bubble_fraction = static_cast<double>(l.pp - 1) / p.micro_batches;
  Builder b{p};
  const LayoutPlace at = layout_place(l, rank);
  const u64 es = dtype_size(m.dtype), h = m.hidden, t = m.tokens_per_micro_batch(), tp = static_cast<u64>(l.tp);
  const int layers = m.layers / l.pp;
  const bool last = at.pp_rank == l.pp - 1;
  for (int mb = 0; mb < p.micro_batches; ++mb) {
    b.comm("pp.activations", LayoutDim::pp, Collective::sendrecv, t * h * es, TrainPhase::pp);
    for (int i = 0; i < layers; ++i) layer(b, m, l, at.ep_rank, false);
    if (last) b.linear("output", h, m.vocab / tp, t, false);
    if (last) b.linear("output", h, m.vocab / tp, t, true);
    for (int i = 0; i < layers; ++i) layer(b, m, l, at.ep_rank, true);
    b.comm("pp.gradients", LayoutDim::pp, Collective::sendrecv, t * h * es, TrainPhase::pp);
  }
  for (int i = 0; i < layers; ++i)
    b.comm("fsdp.reduce_scatter", LayoutDim::fsdp, Collective::reduce_scatter, fsdp_layer_params(m, l) * es,
           TrainPhase::fsdp);
  // The gradients this rank holds after FSDP's reduce_scatter: all-reduced over their replicas.
  u64 dense = static_cast<u64>(layers) * fsdp_layer_params(m, l) / static_cast<u64>(l.fsdp);
  if (last) dense += h * m.vocab / tp;
  b.comm("dp.all_reduce", LayoutDim::dp, Collective::all_reduce, dense * es, TrainPhase::dp);
  b.comm("dp.expert_all_reduce", LayoutDim::expert_dp, Collective::all_reduce, expert_params_local(m, l) * es,
         TrainPhase::dp);
  p.tokens_per_step = static_cast<double>(l.data_parallel()) * p.micro_batches * static_cast<double>(t);
  p.model_flops_per_step = p.tokens_per_step * train_flops_per_token(m);
  return p;
}

double train_memory_bytes(const ModelSpec& m, const ParallelLayout& l) {
  const double tp = l.tp, layers = static_cast<double>(m.layers) / l.pp;
  double dense = layers * static_cast<double>(fsdp_layer_params(m, l)) / l.fsdp;
  dense += 2.0 * static_cast<double>(m.hidden * m.vocab) / tp / l.pp;  // embedding and output, over the stages
  const double weights = dense + static_cast<double>(expert_params_local(m, l));
  const double sbh = static_cast<double>(m.seq * m.micro_batch * m.hidden);
  const double per_layer = 34.0 * sbh / tp;
  const double in_flight = l.pp > 1 ? l.pp : 1;
  return 16.0 * weights + per_layer * layers * in_flight;
}

TrainFigures train_figures(const TrainStepPlan& p, double measured_step_s, double compute_s) {
  TrainFigures f;
  f.bubble_s = p.bubble_fraction * compute_s;
  f.step_s = measured_step_s + f.bubble_s;
  if (!(f.step_s > 0)) return f;
  const double gpus = p.layout.gpus();
  f.tokens_per_s = p.tokens_per_step / f.step_s;
  f.tokens_per_s_per_gpu = f.tokens_per_s / gpus;
  f.model_tflops_per_gpu = p.model_flops_per_step / f.step_s / gpus / 1e12;
  return f;
}

}  // namespace gpuscale
