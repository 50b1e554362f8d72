// training/dp_step: the bucket plan (which layers, sizes, launch order), the program both backends run,
// the model's FLOPs and memory, the figures of a point, and the checks of a verified step.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "training/dp_step.h"

namespace gpuscale {
namespace {

DpStepConfig config(std::uint64_t width, int depth, std::uint64_t batch, std::uint64_t bucket,
                    DType t = DType::fp32) {
  return {t, width, depth, batch, bucket};
}

TEST(DpBuckets, FilledInReverseLayerOrderUpToTheCap) {
  // 4 layers of 256 KiB (fp32, 256x256), cap 512 KiB: {3, 2}, {1, 0}.
  const auto b = dp_buckets(4, 256 * 256, 4, 512 << 10);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].layers, std::vector<int>({3, 2}));
  EXPECT_EQ(b[1].layers, std::vector<int>({1, 0}));
  EXPECT_EQ(b[0].offset_elems, 0u);
  EXPECT_EQ(b[0].elems, 2u * 256 * 256);
  EXPECT_EQ(b[1].offset_elems, b[0].elems);  // contiguous: one all-reduce call per bucket
  // DDP never splits a layer: a layer over the cap is a bucket of its own.
  const auto big = dp_buckets(3, 8192ULL * 8192, 2, 25 << 20);
  ASSERT_EQ(big.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(big[static_cast<std::size_t>(i)].layers, std::vector<int>({2 - i}));
  // Everything in one bucket when the cap allows it; an odd split keeps order.
  EXPECT_EQ(dp_buckets(5, 100, 4, 1 << 20).size(), 1u);
  const auto odd = dp_buckets(5, 100, 4, 800);
  ASSERT_EQ(odd.size(), 3u);
  EXPECT_EQ(odd[2].layers, std::vector<int>({0}));
}

TEST(DpPlan, ProgramRunsForwardThenBackwardWithEachBucketLaunchedAfterItsLastGradient) {
  const auto p = make_dp_plan(config(256, 4, 64, 512 << 10));
  // Forward 0..3, then per layer 3..0: dW, (all-reduce when the bucket is complete), dX except layer 0.
  std::vector<std::string> seen;
  for (const auto& op : p.program) {
    if (op.kind == DpOp::all_reduce) {
      seen.push_back("AR" + std::to_string(op.index));
      continue;
    }
    const auto& g = p.gemms[static_cast<std::size_t>(op.index)];
    const char* k = g.kind == DpGemmKind::forward ? "F" : g.kind == DpGemmKind::weight_grad ? "W" : "X";
    seen.push_back(k + std::to_string(g.layer));
  }
  EXPECT_EQ(seen, std::vector<std::string>({"F0", "F1", "F2", "F3", "W3", "X3", "W2", "AR0", "X2", "W1", "X1", "W0",
                                            "AR1"}));
  EXPECT_EQ(p.gemms.size(), 3u * 4 - 1);
  EXPECT_EQ(p.gradient_elems, 4u * 256 * 256);
  // Gradients of a bucket lie together, in the order their layers finish.
  EXPECT_EQ(p.grad_offset, std::vector<std::uint64_t>({3 * 65536u, 2 * 65536u, 65536u, 0u}));
}

TEST(DpPlan, GemmShapesAndOperands) {
  const auto p = make_dp_plan(config(512, 2, 32, 1 << 30));
  for (const auto& g : p.gemms) {
    SCOPED_TRACE(static_cast<int>(g.kind));
    switch (g.kind) {
      case DpGemmKind::forward:  // X_{l+1} = W_l X_l
        EXPECT_EQ(std::make_tuple(g.shape.m, g.shape.n, g.shape.k, g.shape.trans_a, g.shape.trans_b),
                  std::make_tuple(512u, 32u, 512u, false, false));
        EXPECT_EQ(g.a.array, DpArray::weight);
        EXPECT_EQ(g.c.array, DpArray::activation);
        EXPECT_EQ(g.c.index, g.layer + 1);
        break;
      case DpGemmKind::weight_grad:  // dW_l = G_{l+1} X_l^T
        EXPECT_EQ(std::make_tuple(g.shape.m, g.shape.n, g.shape.k, g.shape.trans_a, g.shape.trans_b),
                  std::make_tuple(512u, 512u, 32u, false, true));
        EXPECT_EQ(g.a.array, DpArray::grad_output);
        EXPECT_EQ(g.a.index, g.layer + 1);
        EXPECT_EQ(g.b.array, DpArray::activation);
        EXPECT_EQ(g.b.index, g.layer);
        EXPECT_EQ(g.c.array, DpArray::weight_grad);
        break;
      case DpGemmKind::input_grad:  // G_l = W_l^T G_{l+1}
        EXPECT_EQ(std::make_tuple(g.shape.m, g.shape.n, g.shape.k, g.shape.trans_a, g.shape.trans_b),
                  std::make_tuple(512u, 32u, 512u, true, false));
        EXPECT_EQ(g.c.array, DpArray::grad_output);
        EXPECT_EQ(g.c.index, g.layer);
        EXPECT_GT(g.layer, 0);
        break;
    }
  }
  EXPECT_DOUBLE_EQ(p.flops_per_step, 5 * 2.0 * 512 * 512 * 32);
  EXPECT_DOUBLE_EQ(dp_flops_per_sample(p.config) * 32, p.flops_per_step);
}

TEST(DpPlan, MemoryAndDefaultsOfTheRealisticModel) {
  // width 8192, depth 4, bf16: 512 MiB of gradients, weights the same, 5 + 4 activations of 128 MiB.
  const auto c = config(8192, 4, 8192, 25 << 20, DType::bf16);
  const auto p = make_dp_plan(c);
  EXPECT_EQ(p.gradient_elems * 2, 512ULL << 20);
  EXPECT_EQ(dp_memory_bytes(c), (512ULL + 512 + 9 * 128) << 20);
  EXPECT_EQ(p.buckets.size(), 4u);
  EXPECT_EQ(dp_memory_bytes(config(1ULL << 40, 100, 1ULL << 40, 1)), UINT64_MAX);
}

TEST(DpPlan, BadModelsAreRefusedWithTheField) {
  EXPECT_THROW(make_dp_plan(config(0, 4, 8, 1)), Error);
  EXPECT_THROW(make_dp_plan(config(8, 0, 8, 1)), Error);
  EXPECT_THROW(make_dp_plan(config(8, 4, 0, 1)), Error);
  EXPECT_THROW(make_dp_plan(config(8, 4, 8, 0)), Error);
  try {
    make_dp_plan(config(1ULL << 32, 1, 8, 1));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("32-bit"), std::string::npos);
    EXPECT_EQ(e.exit_code(), kExitUsage);
  }
}

TEST(DpFigures, ExposedCommunicationAndOverlap) {
  const auto p = make_dp_plan(config(256, 4, 64, 512 << 10));
  auto f = dp_figures(p, 4, 0.012, 0.010, 0.004);
  EXPECT_NEAR(f.exposed_comm_s, 0.002, 1e-15);
  EXPECT_NEAR(f.overlap, 0.5, 1e-12);
  EXPECT_NEAR(f.samples_per_s, 4 * 64 / 0.012, 1e-9);
  EXPECT_NEAR(f.tflops, 4 * p.flops_per_step / 0.012 / 1e12, 1e-15);
  f = dp_figures(p, 1, 0.0099, 0.010, 0.004);  // noise: a step a little faster than compute alone
  EXPECT_EQ(f.exposed_comm_s, 0);
  EXPECT_EQ(f.overlap, 1);
  f = dp_figures(p, 2, 0.020, 0.010, 0.004);  // worse than no overlap at all
  EXPECT_EQ(f.overlap, 0);
  f = dp_figures(p, 2, 0.010, 0.010, 0);
  EXPECT_EQ(f.overlap, 1);
}

TEST(DpCheck, GemmSamplesAgainstTheirInputs) {
  const auto p = make_dp_plan(config(4, 1, 3, 1 << 20));
  DpGemmSample s{0, 1, 2, {0.5, -1.0, 2.0, 0.25}, {1.0, 1.0, 0.5, 4.0}, 0.5 - 1.0 + 1.0 + 1.0};
  auto r = dp_check_gemms(p, {s});
  EXPECT_EQ(r.checked, 1u);
  EXPECT_EQ(r.wrong, 0u);
  s.c += 0.01;  // far beyond fp32 rounding of 4 products
  r = dp_check_gemms(p, {s});
  EXPECT_EQ(r.wrong, 1u);
  EXPECT_NE(r.detail.find("forward GEMM of layer 0: C[1,2]"), std::string::npos) << r.detail;
}

TEST(DpCheck, AllReducedGradientsSumTheRanks) {
  // 3 ranks, 2 sampled entries: local[r * 2 + p].
  const std::vector<double> local = {1.5, -2.0, 0.25, 4.0, -0.75, 1.0};
  const std::vector<double> good = {1.0, 3.0};
  EXPECT_EQ(dp_check_all_reduce(DType::fp32, 3, local, good).wrong, 0u);
  const std::vector<double> rounded = {1.0 + 1e-7, 3.0 - 2e-7};  // within fp32 rounding of 3 terms
  EXPECT_EQ(dp_check_all_reduce(DType::fp32, 3, local, rounded).wrong, 0u);
  const std::vector<double> one_rank_missing = {1.0 - 0.25, 3.0};
  const auto r = dp_check_all_reduce(DType::fp32, 3, local, one_rank_missing);
  EXPECT_EQ(r.wrong, 1u);
  EXPECT_NE(r.detail.find("sum to 1"), std::string::npos) << r.detail;
  EXPECT_EQ(dp_check_all_reduce(DType::bf16, 3, local, {std::nan(""), 3.0}).wrong, 1u);
  // bf16 rounds coarsely: a bf16-rounded sum passes, a value a few percent off does not.
  EXPECT_EQ(dp_check_all_reduce(DType::bf16, 3, local, {1.0078125, 3.0}).wrong, 0u);
  EXPECT_EQ(dp_check_all_reduce(DType::bf16, 3, local, {1.05, 3.0}).wrong, 1u);
}

TEST(DpCheck, SamplePointsCoverEveryGemmAndItsCorners) {
  const auto p = make_dp_plan(config(64, 3, 16, 1 << 20));
  const auto pts = dp_sample_points(p, 5, 8);
  ASSERT_EQ(pts.size(), p.gemms.size());
  for (std::size_t g = 0; g < pts.size(); ++g) {
    const auto& s = p.gemms[g].shape;
    EXPECT_GE(pts[g].size(), 8u);
    bool origin = false;
    for (auto [i, j] : pts[g]) {
      EXPECT_LT(i, s.m);
      EXPECT_LT(j, s.n);
      origin |= i == 0 && j == 0;
    }
    EXPECT_TRUE(origin) << "the corner the fault switch corrupts is always checked";
  }
}

TEST(DpInputs, WeightsAreSharedSamplesDifferPerRank) {
  const double scale = dp_weight_scale(8192);
  EXPECT_NEAR(scale, std::sqrt(3.0 / 8192), 1e-15);
  EXPECT_EQ(dp_input_value(7, DpInput::weight, 2, 11, scale), dp_input_value(7, DpInput::weight, 2, 11, scale));
  EXPECT_LE(std::fabs(dp_input_value(7, DpInput::weight, 2, 11, scale)), scale);
  EXPECT_NE(dp_input_value(7, DpInput::sample, 0, 11, 1), dp_input_value(7, DpInput::sample, 1, 11, 1));
  EXPECT_NE(dp_input_value(7, DpInput::sample, 0, 11, 1), dp_input_value(7, DpInput::loss_grad, 0, 11, 1));
}

}  // namespace
}  // namespace gpuscale
