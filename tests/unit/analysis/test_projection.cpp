#include <gtest/gtest.h>

#include <cmath>

#include "analysis/projection.h"
#include "analysis_fixtures.h"

namespace gpuscale {
namespace {

using testing::loaded;

// Times from a known alpha-beta model: t = alpha x steps(n) + factor(n) x S / beta.
double true_time(const std::string& c, int n, double bytes, double alpha, double beta_gbps) {
  return alpha * latency_steps(c, n) + *bus_factor(c, n) * bytes / (beta_gbps * 1e3);
}

std::vector<FitPoint> sweep(const std::string& c, std::vector<int> counts, double alpha, double beta, double noise = 0) {
  std::vector<FitPoint> pts;
  int i = 0;
  for (int n : counts)
    for (double s = 1024; s <= 64.0 * 1024 * 1024; s *= 4) {
      const double wiggle = noise * std::sin(1.7 * ++i);  // deterministic, within +-noise
      pts.push_back({n, s, true_time(c, n, s, alpha, beta) * (1 + wiggle)});
    }
  return pts;
}

TEST(AlphaBeta, LatencyStepsAndFactorsOfTheRing) {
  EXPECT_EQ(latency_steps("all_reduce", 8), 14);
  EXPECT_EQ(latency_steps("all_gather", 8), 7);
  EXPECT_EQ(latency_steps("sendrecv", 8), 1);
  EXPECT_EQ(latency_steps("nope", 8), 0);
  EXPECT_DOUBLE_EQ(*bus_factor("all_reduce", 4), 1.5);
  EXPECT_DOUBLE_EQ(*bus_factor("all_gather", 4), 0.75);
}

TEST(AlphaBeta, RecoversTheParametersOfExactData) {
  for (const std::string c : {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall", "sendrecv"}) {
    const auto fit = fit_alpha_beta(c, sweep(c, {2, 4, 8}, 7.5, 180.0));
    ASSERT_TRUE(fit.ok) << c << ": " << fit.why;
    EXPECT_NEAR(fit.alpha_us, 7.5, 1e-6 * 7.5) << c;
    EXPECT_NEAR(fit.beta_gbps, 180.0, 1e-6 * 180) << c;
    EXPECT_LT(fit.rms_rel_error, 1e-9) << c;
    EXPECT_EQ(fit.points, 27u);
  }
  // One GPU count is enough when the sizes vary.
  const auto one = fit_alpha_beta("all_reduce", sweep("all_reduce", {4}, 3.0, 25.0));
  ASSERT_TRUE(one.ok);
  EXPECT_NEAR(one.alpha_us, 3.0, 1e-6);
  EXPECT_NEAR(one.beta_gbps, 25.0, 1e-6);
}

TEST(AlphaBeta, NoisyDataStaysCloseAndReportsItsError) {
  const auto fit = fit_alpha_beta("all_reduce", sweep("all_reduce", {2, 4, 8}, 10.0, 100.0, 0.03));
  ASSERT_TRUE(fit.ok);
  EXPECT_NEAR(fit.alpha_us, 10.0, 1.0);
  EXPECT_NEAR(fit.beta_gbps, 100.0, 5.0);
  EXPECT_GT(fit.rms_rel_error, 0.005);
  EXPECT_LT(fit.rms_rel_error, 0.03);
}

TEST(AlphaBeta, PureBandwidthDataClampsLatencyAtZero) {
  auto pts = sweep("all_reduce", {4}, 0.0, 50.0);
  pts[0].time_us *= 0.9;  // the smallest size a little fast: unconstrained least squares gives alpha < 0
  const auto fit = fit_alpha_beta("all_reduce", pts);
  ASSERT_TRUE(fit.ok);
  EXPECT_EQ(fit.alpha_us, 0.0);
  EXPECT_NEAR(fit.beta_gbps, 50.0, 5.0);
}

TEST(AlphaBeta, TooLittleDataIsSaidNotGuessed) {
  EXPECT_FALSE(fit_alpha_beta("all_reduce", {{2, 1024, 5}, {2, 2048, 6}}).ok);
  const auto same_size = fit_alpha_beta("all_reduce", {{2, 1024, 5}, {2, 1024, 6}, {2, 1024, 5.5}});
  EXPECT_FALSE(same_size.ok);
  EXPECT_NE(same_size.why.find("2 sizes"), std::string::npos);
  EXPECT_FALSE(fit_alpha_beta("all_reduce", {{2, 1024, 50}, {2, 1 << 20, 40}, {2, 1 << 22, 30}}).ok);  // no bandwidth term
}

TEST(AlphaBeta, ModelBusbwIsFactorTimesBytesOverTime) {
  AlphaBetaFit f;
  f.collective = "all_reduce";
  f.alpha_us = 5;
  f.beta_gbps = 100;
  f.ok = true;
  const double s = 1 << 20;
  const double t = 5 * 14 + 1.75 * s / 1e5;
  EXPECT_NEAR(model_time_us(f, 8, s), t, 1e-9);
  EXPECT_NEAR(model_busbw(f, 8, s), 1.75 * s / t / 1e3, 1e-9);
}

// Collective rows from the model, and dp-step rows from the dp-step model on top of it.
nlohmann::json collective_row(const std::string& c, int n, double size, double alpha, double beta, const std::string& topo) {
  const double t = true_time(c, n, size, alpha, beta);
  const double algbw = size / t / 1e3, busbw = algbw * *bus_factor(c, n);
  auto r = testing::row_json(c, "collective", {{"dtype", "fp32"}, {"size_bytes", static_cast<std::uint64_t>(size)}}, n,
                             std::vector<double>(static_cast<std::size_t>(n), busbw));
  r["topology"] = topo;
  r["metrics"] = {{"time_us", t}, {"algbw", algbw}, {"busbw", busbw}, {"size_bytes", size}};
  r["expected_peak"] = 200.0;
  return r;
}

TEST(Projection, PredictsBusbwAtTwiceAndFourTimesTheLargestCount) {
  std::vector<nlohmann::json> rows;
  for (double s = 4096; s <= 16.0 * 1024 * 1024; s *= 4) {
    rows.push_back(collective_row("all_reduce", 2, s, 4, 300, "intra-node"));
    rows.push_back(collective_row("all_reduce", 4, s, 4, 300, "intra-node"));
    rows.push_back(collective_row("all_reduce", 8, s, 15, 45, "inter-node"));
  }
  const auto p = project(loaded(rows));
  EXPECT_EQ(p.largest_count, 8);
  EXPECT_EQ(p.targets, (std::vector<int>{16, 32}));
  ASSERT_EQ(p.fits.size(), 2u);
  ASSERT_EQ(p.collectives.size(), 1u);
  const auto& c = p.collectives[0];
  EXPECT_EQ(c.topology, "inter-node");  // the level of the largest measured count
  ASSERT_TRUE(c.fit.ok);
  EXPECT_NEAR(c.fit.alpha_us, 15, 1e-6);
  EXPECT_NEAR(c.fit.beta_gbps, 45, 1e-6);
  const double s = 16.0 * 1024 * 1024;
  ASSERT_EQ(c.predicted_busbw.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const int n = c.target_n[i];
    EXPECT_NEAR(c.predicted_busbw[i], *bus_factor("all_reduce", n) * s / true_time("all_reduce", n, s, 15, 45) / 1e3, 1e-6);
  }
  EXPECT_LT(c.predicted_busbw[1], c.predicted_busbw[0]);  // more latency steps at 32
  ASSERT_TRUE(c.link_peak);
  EXPECT_TRUE(p.dp_steps.empty());
}

TEST(Projection, ComparisonTransportRowsStayOutOfTheModel) {
  // CUDA files carry NCCL rows and, with CUDA-aware MPI, MPI rows of the same points: only NCCL is modelled.
  std::vector<nlohmann::json> rows;
  for (double s = 4096; s <= 16.0 * 1024 * 1024; s *= 4)
    for (int n : {2, 4}) {
      auto nccl = collective_row("all_reduce", n, s, 4, 300, "intra-node");
      nccl["params"]["transport"] = "nccl";
      auto mpi = collective_row("all_reduce", n, s, 40, 20, "intra-node");
      mpi["params"]["transport"] = "mpi";
      rows.push_back(nccl);
      rows.push_back(mpi);
    }
  const auto p = project(loaded(rows));
  ASSERT_EQ(p.collectives.size(), 1u);
  const auto& c = p.collectives[0];
  ASSERT_TRUE(c.fit.ok) << c.fit.why;
  EXPECT_NEAR(c.fit.beta_gbps, 300, 1e-6);
  EXPECT_EQ(c.fit.points, 14u);  // 7 sizes x 2 GPU counts, NCCL rows only
  const double s = 16.0 * 1024 * 1024;
  EXPECT_NEAR(*c.measured_busbw, 1.5 * s / true_time("all_reduce", 4, s, 4, 300) / 1e3, 1e-6);
}

TEST(Projection, DpStepModelRecoversComputeAndOverlap) {
  const double alpha = 6, beta = 80, compute = 10000, hidden = 800, grad = 64 << 20, bucket = 16 << 20;
  auto comm = [&](int n) { return 4 * true_time("all_reduce", n, bucket, alpha, beta); };
  std::vector<nlohmann::json> rows;
  for (double s = 4096; s <= 64.0 * 1024 * 1024; s *= 4) {
    rows.push_back(collective_row("all_reduce", 2, s, alpha, beta, "intra-node"));
    rows.push_back(collective_row("all_reduce", 4, s, alpha, beta, "intra-node"));
  }
  for (int n : {1, 2, 4}) {
    const double exposed = n == 1 ? 0 : std::max(0.0, comm(n) - hidden);
    auto r = testing::row_json("dp-step", "independent", {{"bucket_bytes", bucket}, {"width", 1024}}, n,
                               std::vector<double>(static_cast<std::size_t>(n), 1e6 / (compute + exposed)), "samples/s");
    r["topology"] = n == 1 ? "single" : "intra-node";
    r["metrics"] = {{"step_time_us", compute + exposed}, {"exposed_comm_us", exposed}, {"gradient_bytes", grad}};
    rows.push_back(r);
  }
  ASSERT_GT(comm(4), hidden);  // some communication is exposed at 4: the overlap is measurable
  const auto p = project(loaded(rows));
  ASSERT_EQ(p.dp_steps.size(), 1u);
  const auto& d = p.dp_steps[0];
  ASSERT_TRUE(d.ok) << d.why;
  EXPECT_NEAR(d.compute_us, compute, 1e-6);
  EXPECT_NEAR(d.hidden_us, hidden, 1e-6);
  EXPECT_LT(d.rms_rel_error, 1e-9);
  ASSERT_EQ(d.predicted.size(), 2u);
  for (const auto& m : d.predicted) {
    const double step = compute + std::max(0.0, comm(m.gpu_count) - hidden);
    EXPECT_NEAR(m.step_time_us, step, 1e-6);
    EXPECT_NEAR(m.efficiency, compute / step, 1e-9);
  }
}

TEST(Projection, DpStepWithoutWhatTheModelNeedsSaysWhy) {
  auto r = testing::row_json("dp-step", "independent", {{"width", 1}}, 2, {1, 1}, "samples/s");
  r["metrics"] = {{"step_time_us", 100.0}, {"exposed_comm_us", 0.0}, {"gradient_bytes", 1e6}};
  const auto p = project(loaded({r}));
  ASSERT_EQ(p.dp_steps.size(), 1u);
  EXPECT_FALSE(p.dp_steps[0].ok);
  EXPECT_NE(p.dp_steps[0].why.find("1 GPU"), std::string::npos);
  EXPECT_NE(format_projection(p).find("PROJECTION"), std::string::npos);
}

}  // namespace
}  // namespace gpuscale

namespace gpuscale {
namespace {

TEST(ProjectionRefusal, NamedBoundsDecide) {
  EXPECT_TRUE(projection_refusal(1, 0.0));  // one multi-GPU count: however good the fit
  EXPECT_FALSE(projection_refusal(kMinProjectionCounts, kMaxProjectionFitError));
  const auto why = projection_refusal(kMinProjectionCounts, kMaxProjectionFitError + 0.01);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("bound"), std::string::npos) << *why;
  EXPECT_TRUE(projection_refusal(3, std::nan("")));
}

TEST(ProjectionRefusal, OneMultiGpuCountIsNotExtrapolated) {
  std::vector<nlohmann::json> rows;
  for (double s = 4096; s <= 16.0 * 1024 * 1024; s *= 4) rows.push_back(collective_row("all_reduce", 2, s, 4, 300, "intra-node"));
  const auto p = project(loaded(rows));
  ASSERT_EQ(p.fits.size(), 1u);
  EXPECT_TRUE(p.fits[0].ok) << "the fit itself is shown: it describes the measured points";
  ASSERT_EQ(p.collectives.size(), 1u);
  EXPECT_FALSE(p.collectives[0].fit.ok);
  EXPECT_TRUE(p.collectives[0].predicted_busbw.empty());
  EXPECT_NE(p.collectives[0].fit.why.find("1 multi-GPU count"), std::string::npos) << p.collectives[0].fit.why;
  EXPECT_NE(format_projection(p).find("not projected: measured at 1 multi-GPU count"), std::string::npos)
      << format_projection(p);
}

TEST(ProjectionRefusal, AFitErrorAboveTheBoundIsNotProjected) {
  std::vector<nlohmann::json> rows;
  int i = 0;
  for (double s = 4096; s <= 16.0 * 1024 * 1024; s *= 4)
    for (int n : {2, 4}) {
      auto r = collective_row("all_reduce", n, s, 4, 300, "intra-node");
      r["metrics"]["time_us"] = r["metrics"]["time_us"].get<double>() * (++i % 2 ? 3.0 : 0.3);  // far off any model
      rows.push_back(r);
    }
  const auto p = project(loaded(rows));
  ASSERT_EQ(p.collectives.size(), 1u);
  const auto& c = p.collectives[0];
  ASSERT_FALSE(c.fit.ok);
  EXPECT_NE(c.fit.why.find("bound"), std::string::npos) << c.fit.why;
  EXPECT_TRUE(c.predicted_busbw.empty());
}

TEST(ProjectionRefusal, DpStepFromOneMultiGpuPointIsRefused) {
  const double grad = 64 << 20;
  std::vector<nlohmann::json> rows;
  for (double s = 4096; s <= 64.0 * 1024 * 1024; s *= 4)
    for (int n : {2, 4}) rows.push_back(collective_row("all_reduce", n, s, 6, 80, "intra-node"));
  for (int n : {1, 2}) {  // dp-step measured at 1 and 2 GPUs only
    auto r = testing::row_json("dp-step", "independent", {{"width", 1024}}, n,
                               std::vector<double>(static_cast<std::size_t>(n), 90.0), "samples/s");
    r["topology"] = n == 1 ? "single" : "intra-node";
    r["metrics"] = {{"step_time_us", n == 1 ? 10000.0 : 11000.0}, {"exposed_comm_us", n == 1 ? 0.0 : 1000.0},
                    {"gradient_bytes", grad}};
    rows.push_back(r);
  }
  const auto p = project(loaded(rows));
  ASSERT_EQ(p.dp_steps.size(), 1u);
  EXPECT_FALSE(p.dp_steps[0].ok);
  EXPECT_TRUE(p.dp_steps[0].predicted.empty());
  EXPECT_NE(p.dp_steps[0].why.find("1 multi-GPU count"), std::string::npos) << p.dp_steps[0].why;
  const auto text = format_projection(p);
  EXPECT_EQ(text.find("PROJECTED step"), std::string::npos) << text;
  EXPECT_NE(text.find("not projected"), std::string::npos) << text;
}

}  // namespace
}  // namespace gpuscale
