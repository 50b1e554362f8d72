// training/model_spec, parallel_layout and train_step_plan: the presets against their published sizes,
// the layout's text, refusals and groups, and the step program's FLOPs, sizes and order.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "core/error.h"
#include "training/train_step_plan.h"

namespace gpuscale {
namespace {

ModelSpec preset(const char* name) {
  auto m = model_preset(name);
  EXPECT_TRUE(m.has_value()) << name;
  return *m;
}

LayoutSpec layout(const char* text) {
  std::string why;
  auto l = parse_layout(text, why);
  EXPECT_TRUE(l.has_value()) << text << ": " << why;
  return l.value_or(LayoutSpec{});
}

TEST(ModelSpec, PresetsHaveTheirPublishedSizes) {
  // Meta: Llama 3 8B has 8.03B parameters, 70B 70.6B; Mistral: Mixtral 8x7B 46.7B in all, 12.9B active.
  EXPECT_NEAR(total_params(preset("llama3-8b")) / 8.03e9, 1, 0.005);
  EXPECT_NEAR(total_params(preset("llama3-70b")) / 70.6e9, 1, 0.005);
  EXPECT_NEAR(total_params(preset("mixtral-8x7b")) / 46.7e9, 1, 0.005);
  const auto mix = preset("mixtral-8x7b");
  // Active: without the input embedding, which the 12.9B counts.
  EXPECT_NEAR((active_params(mix) + static_cast<double>(mix.hidden * mix.vocab)) / 12.9e9, 1, 0.01);
  for (const auto& name : model_preset_names()) {
    EXPECT_FALSE(model_refusal(preset(name.c_str())).has_value()) << name;
    EXPECT_FALSE(preset(name.c_str()).source.empty()) << name;
  }
  EXPECT_FALSE(model_preset("gpt-5").has_value());
}

TEST(ModelSpec, FlopsPerTokenArePalmsFormula) {
  const auto m = preset("llama3-8b");
  // Written out: per layer 4096 x (4096 + 2 x 1024) + 4096^2 attention weights and 3 x 4096 x 14336 MLP
  // weights, the output projection 4096 x 128256; 6 N plus 12 x 32 x 4096 x 8192.
  const double n = 32.0 * (4096.0 * 6144 + 4096.0 * 4096 + 3.0 * 4096 * 14336) + 4096.0 * 128256;
  EXPECT_DOUBLE_EQ(train_flops_per_token(m), 6 * n + 12.0 * 32 * 4096 * 8192);
}

TEST(ModelSpec, QuickShrinksAndRecordsIt) {
  const auto q = shrink_model(preset("llama3-8b"), true, std::nullopt);
  EXPECT_EQ(q.layers, 2);
  EXPECT_EQ(q.seq, 128u);
  EXPECT_EQ(q.heads, 2);
  EXPECT_EQ(q.hidden % static_cast<std::uint64_t>(q.heads), 0u);
  EXPECT_EQ(q.heads % q.kv_heads, 0);
  EXPECT_FALSE(model_refusal(q).has_value());
  EXPECT_EQ(q.shrink.at("layers"), 32);
  EXPECT_EQ(q.shrink.at("hidden"), 4096);
  const auto l = shrink_model(preset("mixtral-8x7b"), false, 4);
  EXPECT_EQ(l.layers, 4);
  EXPECT_EQ(l.experts, 8);
  EXPECT_EQ(l.shrink, nlohmann::json({{"layers", 32}}));
  EXPECT_TRUE(shrink_model(preset("llama3-8b"), false, std::nullopt).shrink.empty());
}

TEST(ModelSpec, FilesAreReadStrictly) {
  const nlohmann::json good = {{"layers", 2}, {"hidden", 64}, {"ffn", 128}, {"heads", 4}, {"kv_heads", 2},
                               {"seq", 32}, {"vocab", 100}, {"experts", 4}, {"top_k", 2}, {"dtype", "fp32"}};
  const auto m = model_from_json(good, "m.json");
  EXPECT_TRUE(m.moe());
  EXPECT_EQ(m.dtype, DType::fp32);
  for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"layers", 0}, {"hidden", -1}, {"heads", 3}, {"kv_heads", 3}, {"top_k", 5}, {"colour", "red"}, {"seq", "x"}}) {
    auto bad = good;
    bad[key] = value;
    EXPECT_THROW(model_from_json(bad, "m.json"), Error) << key;
  }
  auto missing = good;
  missing.erase("vocab");
  EXPECT_THROW(model_from_json(missing, "m.json"), Error);
}

TEST(ParallelLayout, TextAndResolution) {
  EXPECT_EQ(layout("dp").text(), "dp");
  EXPECT_EQ(layout("fsdp").text(), "fsdp");
  EXPECT_EQ(layout("pp=2,tp=2").text(), "tp=2,pp=2");
  EXPECT_EQ(layout("tp=2,dp").text(), "tp=2");
  const auto tp2 = layout("tp=2");
  EXPECT_FALSE(resolve_layout(tp2, 1).has_value());
  EXPECT_FALSE(resolve_layout(tp2, 3).has_value());
  const auto at8 = resolve_layout(tp2, 8);
  ASSERT_TRUE(at8.has_value());
  EXPECT_EQ(at8->dp, 4);
  EXPECT_EQ(at8->gpus(), 8);
  const auto f = resolve_layout(layout("fsdp"), 4);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->fsdp, 4);
  EXPECT_EQ(f->dp, 1);
  const auto ep8 = layout("ep=8");  // ep out of the data-parallel ranks: only where dp x fsdp holds 8
  EXPECT_FALSE(resolve_layout(ep8, 4).has_value());
  EXPECT_TRUE(resolve_layout(ep8, 8).has_value());
  std::string why;
  for (const char* bad : {"", "dp,fsdp", "tp", "tp=0", "tp=2,tp=4", "xp=2", "tp=2x", "dp=2,fsdp=2", "tp=100000"}) {
    why.clear();
    EXPECT_FALSE(parse_layout(bad, why).has_value()) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(ParallelLayout, RefusalsNameTheProblem) {
  const auto dense = preset("llama3-8b"), moe = preset("mixtral-8x7b");
  auto why = [&](const char* text, const ModelSpec& m, int n, int per_node) {
    return layout_refusal(layout(text), m, n, per_node).value_or("");
  };
  EXPECT_EQ(why("tp=2", dense, 8, 2), "");
  EXPECT_NE(why("tp=3", dense, 8, 8).find("does not divide the launch's 8 GPUs"), std::string::npos);
  EXPECT_NE(why("tp=4", dense, 8, 2).find("more than a node"), std::string::npos);
  EXPECT_NE(why("ep=3", moe, 6, 6).find("8 experts do not divide over ep 3"), std::string::npos);
  EXPECT_NE(why("ep=2", dense, 8, 8).find("dense"), std::string::npos);
  EXPECT_NE(why("pp=3", dense, 6, 6).find("pp 3 does not divide 32 layers"), std::string::npos);
  EXPECT_EQ(why("ep=8", moe, 8, 2), "");
}

// Every group along every dimension partitions the ranks into groups of that dimension's size, and a
// TP group is consecutive ranks.
TEST(ParallelLayout, GroupsPartitionTheRanks) {
  for (const char* text : {"dp", "fsdp", "tp=2", "pp=2", "tp=2,pp=2", "ep=4", "ep=2,tp=2", "pp=2,fsdp", "dp=2"}) {
    for (int n : {1, 2, 4, 8, 16}) {
      const auto l = resolve_layout(layout(text), n);
      if (!l) continue;
      for (LayoutDim dim : {LayoutDim::tp, LayoutDim::fsdp, LayoutDim::dp, LayoutDim::ep, LayoutDim::expert_dp,
                            LayoutDim::pp}) {
        std::map<int, std::set<int>> groups;
        for (int r = 0; r < n; ++r) {
          ASSERT_TRUE(groups[layout_colour(*l, r, dim)].insert(layout_group_rank(*l, r, dim)).second)
              << text << " n=" << n << " rank " << r;
        }
        for (const auto& [colour, ranks] : groups) {
          ASSERT_EQ(static_cast<int>(ranks.size()), layout_group_size(*l, dim)) << text << " n=" << n;
          ASSERT_EQ(*ranks.rbegin(), layout_group_size(*l, dim) - 1);
        }
      }
      for (int r = 0; r < n; ++r) ASSERT_EQ(layout_colour(*l, r, LayoutDim::tp), r / l->tp * l->tp);
    }
  }
}

// All ranks of a group issue its collectives in the same order with the same sizes (else they would
// wait for each other forever), and the ranks' GEMMs add up to the model's FLOPs.
TEST(TrainStepPlan, GroupsAgreeAndFlopsAddUp) {
  // As many KV heads as heads, so TP shards them (fewer KV heads than tp are replicated: more FLOPs).
  auto dense = shrink_model(preset("llama3-8b"), true, std::nullopt);
  auto moe = shrink_model(preset("mixtral-8x7b"), true, std::nullopt);
  dense.kv_heads = dense.heads;
  moe.kv_heads = moe.heads;
  for (const auto& [text, model] : std::vector<std::pair<const char*, ModelSpec>>{
           {"dp", dense}, {"fsdp", dense}, {"tp=2", dense}, {"pp=2", dense}, {"tp=2,pp=2,fsdp", dense},
           {"ep=4", moe}, {"ep=8", moe}, {"ep=2,tp=2", moe}}) {
    const auto l = resolve_layout(layout(text), 8);
    ASSERT_TRUE(l.has_value()) << text;
    std::vector<TrainStepPlan> plans;
    double flops = 0;
    for (int r = 0; r < 8; ++r) {
      plans.push_back(make_train_step_plan(model, *l, r));
      flops += plans.back().gemm_flops;
    }
    // Dense: exact. MoE: the router runs on every TP rank and the skew's rounding drops a few tokens.
    EXPECT_NEAR(flops / plans[0].model_flops_per_step, 1, model.moe() ? 0.05 : 1e-12) << text;
    for (LayoutDim dim : {LayoutDim::tp, LayoutDim::fsdp, LayoutDim::dp, LayoutDim::ep, LayoutDim::expert_dp,
                          LayoutDim::pp}) {
      std::map<int, std::vector<std::tuple<std::string, Collective, std::uint64_t>>> first;
      for (int r = 0; r < 8; ++r) {
        std::vector<std::tuple<std::string, Collective, std::uint64_t>> seq;
        for (const auto& op : plans[static_cast<std::size_t>(r)].program) {
          if (op.gemm) continue;
          const auto& c = plans[static_cast<std::size_t>(r)].comms[static_cast<std::size_t>(op.index)];
          if (c.group == dim) seq.emplace_back(c.what, c.coll, c.bytes);
        }
        auto [it, fresh] = first.emplace(layout_colour(*l, r, dim), seq);
        if (!fresh) {
          ASSERT_EQ(it->second, seq) << text << " rank " << r;
        }
      }
    }
  }
}

TEST(TrainStepPlan, EachLayoutHasItsPatterns) {
  const auto dense = shrink_model(preset("llama3-8b"), true, std::nullopt);
  const auto moe = shrink_model(preset("mixtral-8x7b"), true, std::nullopt);
  auto patterns = [&](const char* text, const ModelSpec& m) {
    const auto p = make_train_step_plan(m, *resolve_layout(layout(text), 8), 0);
    std::set<std::string> out;
    for (const auto& c : p.comms) out.insert(c.what);
    return out;
  };
  EXPECT_EQ(patterns("dp", dense), (std::set<std::string>{"dp.all_reduce"}));
  EXPECT_EQ(patterns("fsdp", dense), (std::set<std::string>{"fsdp.all_gather", "fsdp.reduce_scatter"}));
  EXPECT_EQ(patterns("tp=2", dense), (std::set<std::string>{"tp.all_reduce", "dp.all_reduce"}));
  EXPECT_EQ(patterns("pp=2", dense), (std::set<std::string>{"pp.activations", "pp.gradients", "dp.all_reduce"}));
  EXPECT_EQ(patterns("ep=8", moe), (std::set<std::string>{"ep.dispatch", "ep.combine", "dp.all_reduce"}));
  EXPECT_EQ(patterns("ep=4", moe),
            (std::set<std::string>{"ep.dispatch", "ep.combine", "dp.all_reduce", "dp.expert_all_reduce"}));
  const auto p = make_train_step_plan(dense, *resolve_layout(layout("tp=2"), 8), 0);
  for (const auto& c : p.comms) {
    if (c.what == "tp.all_reduce") {
      EXPECT_EQ(c.bytes, dense.seq * dense.hidden * dtype_size(dense.dtype));
    }
  }
  const auto pp = make_train_step_plan(dense, *resolve_layout(layout("pp=2"), 8), 0);
  EXPECT_EQ(pp.micro_batches, 4);
  EXPECT_DOUBLE_EQ(pp.bubble_fraction, 0.25);
  const auto e = make_train_step_plan(moe, *resolve_layout(layout("ep=8"), 8), 0);
  for (const auto& c : e.comms) {
    if (c.coll == Collective::alltoallv) {
      EXPECT_EQ(c.skew, kRouterSkew);
    }
  }
}

TEST(TrainStepPlan, TheHotExpertRankReceivesMost) {
  std::uint64_t all = 0, prev = UINT64_MAX;
  for (int r = 0; r < 8; ++r) {
    const auto got = expert_tokens_received(1000, 8, r, 1024);
    EXPECT_LE(got, prev);
    prev = got;
    all += got;
  }
  EXPECT_GT(expert_tokens_received(1000, 8, 0, 1024), 3 * 1000u);  // 8 / H(8, 1.2) = 3.43 x what it sends
  EXPECT_NEAR(static_cast<double>(all) / (8 * 1000), 1, 0.01);
}

TEST(TrainStepPlan, MemoryOfAFullModelAndItsShards) {
  const auto m = preset("llama3-8b");
  // 16 bytes per weight on one GPU: 128 GB before activations, more than any GPU of 2026 holds.
  EXPECT_GT(train_memory_bytes(m, *resolve_layout(layout("dp"), 1)), 16 * 8.03e9);
  const double one = train_memory_bytes(m, *resolve_layout(layout("fsdp"), 1));
  const double eight = train_memory_bytes(m, *resolve_layout(layout("fsdp"), 8));
  EXPECT_LT(eight, one / 2);  // the weights' 128 GB over 8, the activations (36.5 GB) whole
  EXPECT_LT(train_memory_bytes(m, *resolve_layout(layout("tp=8"), 8)), one / 4);
}

TEST(TrainStepPlan, ReplicatedKvHeadsCostMore) {
  const auto m = shrink_model(preset("llama3-8b"), true, std::nullopt);  // 2 heads, 1 KV head
  ASSERT_EQ(m.kv_heads, 1);
  const auto l = *resolve_layout(layout("tp=2"), 2);
  const double flops = make_train_step_plan(m, l, 0).gemm_flops + make_train_step_plan(m, l, 1).gemm_flops;
  EXPECT_GT(flops, make_train_step_plan(m, l, 0).model_flops_per_step);
}

TEST(TrainStepPlan, AccumulationHoldsTheGlobalBatchAndReducesOncePerStep) {
  const auto m = shrink_model(preset("llama3-8b"), true, std::nullopt);
  auto count = [](const TrainStepPlan& p, const std::string& what) {
    std::size_t n = 0;
    for (const auto& op : p.program) n += !op.gemm && p.comms[static_cast<std::size_t>(op.index)].what == what;
    return n;
  };
  for (const char* text : {"fsdp", "dp", "pp=2"}) {
    // Strong scaling to 8 GPUs: at 2 GPUs each data-parallel rank runs 8 / 2 times the micro-batches.
    const auto wide = *resolve_layout(layout(text), 8), narrow = *resolve_layout(layout(text), 2);
    const int a = wide.data_parallel() / narrow.data_parallel();
    const auto big = make_train_step_plan(m, wide, 0), small = make_train_step_plan(m, narrow, 0, a);
    EXPECT_DOUBLE_EQ(small.tokens_per_step, big.tokens_per_step) << text;
    EXPECT_EQ(small.micro_batches, big.micro_batches * a) << text;
    EXPECT_DOUBLE_EQ(small.model_flops_per_step, big.model_flops_per_step) << text;
    EXPECT_DOUBLE_EQ(small.gemm_flops, big.gemm_flops * a) << text;  // the same shard, a times the passes
    const std::size_t layers = static_cast<std::size_t>(m.layers / wide.pp);
    EXPECT_EQ(count(small, "fsdp.reduce_scatter"), std::string(text) == "fsdp" ? layers : 0u) << text;
    EXPECT_EQ(count(small, "fsdp.all_gather"), std::string(text) == "fsdp" ? 2 * layers * small.micro_batches : 0u) << text;
    EXPECT_EQ(count(small, "dp.all_reduce"), narrow.dp > 1 ? 1u : 0u) << text;
  }
  EXPECT_THROW(make_train_step_plan(m, *resolve_layout(layout("dp"), 2), 0, 0), std::invalid_argument);
}

TEST(TrainStepPlan, Fp8AndInt8GemmsRunInTheirTensorCoresLayout) {
  // fp8 and int8 tensor-core GEMMs take TN (cuBLASLt on Hopper): fp8 training keeps transposed copies
  // of its operands so every GEMM is TN; the other types keep the model's NN, TN and NT, and the
  // FLOPs are the same either way.
  auto m = shrink_model(preset("llama3-8b"), true, std::nullopt);
  const auto l = *resolve_layout(layout("tp=2"), 2);
  m.dtype = DType::bf16;
  const auto natural = make_train_step_plan(m, l, 0);
  std::set<std::string> layouts;
  for (const auto& g : natural.gemms) layouts.insert(gemm_layout(g.shape));
  EXPECT_EQ(layouts, (std::set<std::string>{"NN", "TN", "NT"}));
  for (DType t : {DType::fp8_e4m3, DType::fp8_e5m2, DType::int8}) {
    m.dtype = t;
    const auto p = make_train_step_plan(m, l, 0);
    for (const auto& g : p.gemms) EXPECT_EQ(gemm_layout(g.shape), "TN") << dtype_name(t) << " " << g.what;
    EXPECT_DOUBLE_EQ(p.gemm_flops, natural.gemm_flops) << dtype_name(t);
    EXPECT_EQ(p.program.size(), natural.program.size()) << dtype_name(t);
  }
}

TEST(TrainStepPlan, FiguresAddTheBubble) {
  const auto m = shrink_model(preset("llama3-8b"), true, std::nullopt);
  const auto p = make_train_step_plan(m, *resolve_layout(layout("pp=2"), 4), 0);
  const auto f = train_figures(p, 1.0, 0.8);
  EXPECT_DOUBLE_EQ(f.bubble_s, 0.2);
  EXPECT_DOUBLE_EQ(f.step_s, 1.2);
  EXPECT_DOUBLE_EQ(f.tokens_per_s, p.tokens_per_step / 1.2);
  EXPECT_DOUBLE_EQ(f.tokens_per_s_per_gpu, f.tokens_per_s / 4);
  EXPECT_EQ(train_figures(p, 0, 0).tokens_per_s, 0);
}

}  // namespace
}  // namespace gpuscale
