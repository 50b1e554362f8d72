// planning/capacity_plan: the plan of a training workload from rows. Every expected figure is derived
// here again from the rows' own numbers (random each run): tokens/s measured where measured and from
// c(n) = a + b log2(n/n0) beyond, no count beyond 4x the largest measured, the checkpoint's bytes from the
// shapes by hand, its stall at the storage row of the largest rank count not above the GPU count, stalls
// added to the time to train, power per GPU times the count, and each refusal.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/error.h"
#include "planning/capacity_plan.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

struct Shape {
  int layers = 2, hidden = 64, ffn = 256, heads = 4, kv_heads = 2, seq = 128, vocab = 1000;
};

// Weights by hand: Q and O h x h, K and V h x (kv_heads x head_dim), the MLP 3 h f, embedding and output h V.
double hand_params(const Shape& s) {
  const double kv = s.kv_heads * (s.hidden / s.heads);
  return s.layers * (2.0 * s.hidden * s.hidden + 2.0 * s.hidden * kv + 3.0 * s.hidden * s.ffn) + 2.0 * s.hidden * s.vocab;
}

nlohmann::json params(const Shape& s, const std::string& layout, const std::string& name = "llama3-8b") {
  return {{"name", name},       {"layers", s.layers}, {"hidden", s.hidden}, {"ffn", s.ffn},         {"heads", s.heads},
          {"kv_heads", s.kv_heads}, {"seq", s.seq},   {"micro_batch", 1},   {"vocab", s.vocab},     {"dtype", "fp32"},
          {"layout", layout},   {"scaling", "weak"}};
}

// A weak-scaling train-step row: every GPU does `tokens` tokens a step of step_us, `comm` of it in dp_comm.
ResultRow step_row(int n, int nodes, double step_us, double tokens, double comm_share, const std::string& layout = "dp") {
  ResultRow r;
  r.benchmark = "train-step";
  r.scope = "collective";
  r.unit = "tokens/s";
  r.gpu_count = n;
  r.nodes = nodes;
  r.params = params(Shape{}, layout);
  r.aggregate = n * tokens / (step_us * 1e-6);
  r.metrics["step_time_us"] = step_us;
  r.metrics["phase_us"] = {{"compute", step_us * (1 - comm_share)}, {"dp_comm", step_us * comm_share}};
  return r;
}

ResultRow ckpt_row(int n, double gb_s, const std::string& io = "direct") {
  ResultRow r;
  r.benchmark = "checkpoint.write";
  r.scope = "independent";
  r.unit = "GB/s";
  r.gpu_count = n;
  r.params = {{"layout", "file_per_rank"}, {"io", io}, {"checkpoint_bytes", 1 << 20}};
  r.metrics["checkpoint_gb_s"] = gb_s;
  return r;
}

struct Fixture {
  std::mt19937_64 rng{test_seed()};
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
};

TEST(CapacityPlan, MeasuredCountsThenTheModelToFourTimesTheLargest) {
  Fixture f;
  const double a = f.uniform(50, 100), b = f.uniform(1, 5), tokens = 1024;  // GPU-us per token
  std::vector<ResultRow> rows;
  for (int n : {1, 2, 4}) rows.push_back(step_row(n, 1, (a + b * std::log2(n)) * tokens, tokens, 0.1));
  PlanWorkload w;
  w.model = "llama3-8b";
  w.tokens = f.uniform(1e9, 1e10);
  const auto p = make_capacity_plan(w, rows, nlohmann::json::array());
  ASSERT_EQ(p.series.size(), 1u);
  const auto& s = p.series[0];
  ASSERT_EQ(s.counts.size(), 5u);  // 1, 2, 4 measured; 8 and 16 projected; not 32
  for (std::size_t i = 0; i < 5; ++i) {
    const int n = 1 << i;
    const auto& c = s.counts[i];
    EXPECT_EQ(c.gpus, n);
    EXPECT_EQ(c.measured, n <= 4);
    const double tok_s = n * 1e6 / (a + b * std::log2(n));
    EXPECT_NEAR(c.tokens_per_s / tok_s, 1, 1e-9) << n;
    EXPECT_NEAR(c.efficiency, a / (a + b * std::log2(n)), 1e-9) << n;
    EXPECT_NEAR(c.train_s / (w.tokens / tok_s), 1, 1e-9) << n;
    EXPECT_NEAR(c.step_s, tokens * n / tok_s, 1e-9 * c.step_s) << n;  // weak: n x tokens a step
    EXPECT_FALSE(c.power_w);
    EXPECT_FALSE(c.ckpt_stall_s);
  }
  EXPECT_NE(s.limit_why.find("not planned beyond 16 GPUs"), std::string::npos) << s.limit_why;
  EXPECT_NEAR(p.total_params, hand_params(Shape{}), 0.5);
  EXPECT_DOUBLE_EQ(p.ckpt_bytes_per_param, 12);  // fp32: weights, Adam m and v
  EXPECT_NE(p.power_source.find("none"), std::string::npos);
}

TEST(CapacityPlan, GpusAvailableStopTheCountsAndTheDeadlineTakesTheFewestThatMeetIt) {
  Fixture f;
  const double a = f.uniform(50, 100), b = f.uniform(0.5, 2), tokens = 512;
  std::vector<ResultRow> rows;
  for (int n : {1, 2, 4}) rows.push_back(step_row(n, 1, (a + b * std::log2(n)) * tokens, tokens, 0.05));
  PlanWorkload w;
  w.model = "llama3-8b";
  w.tokens = 1e9;
  w.gpus = 8;
  auto time_at = [&](int n) { return w.tokens / (n * 1e6 / (a + b * std::log2(n))); };
  w.deadline_s = (time_at(2) + time_at(4)) / 2;  // 2 GPUs miss it, 4 meet it
  const auto p = make_capacity_plan(w, rows, nlohmann::json::array());
  const auto& s = p.series[0];
  EXPECT_EQ(s.counts.back().gpus, 8);
  EXPECT_NE(s.limit_why.find("--gpus 8"), std::string::npos) << s.limit_why;
  ASSERT_TRUE(s.chosen);
  EXPECT_EQ(*s.chosen, 4);
  w.deadline_s = time_at(8) * 0.9;
  try {
    make_capacity_plan(w, rows, nlohmann::json::array());
    FAIL() << "a deadline no count meets was planned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the fastest, 8 GPUs"), std::string::npos) << e.what();
  }
  w.deadline_s.reset();
  PlanWorkload few = w;  // GPUs available below every measured count: nothing to plan
  few.gpus = 1;
  rows.erase(rows.begin());  // measured at 2 and 4 only
  EXPECT_THROW(make_capacity_plan(few, rows, nlohmann::json::array()), Error);
}

TEST(CapacityPlan, CheckpointStallsFromTheStorageRowAtOrBelowTheCountAndInTheTimeToTrain) {
  Fixture f;
  const double tokens = 256, step_us = f.uniform(1e5, 2e5);
  std::vector<ResultRow> rows;
  for (int n : {1, 2, 4}) rows.push_back(step_row(n, 1, step_us, tokens, 0.02));
  const double bw1 = f.uniform(0.5, 1), bw2 = f.uniform(1, 2);
  rows.push_back(ckpt_row(1, bw1));
  rows.push_back(ckpt_row(2, bw2 * 0.5, "buffered"));  // the slower of two layouts at 2 ranks is not used
  rows.push_back(ckpt_row(2, bw2));
  PlanWorkload w;
  w.model = "llama3-8b";
  w.tokens = f.uniform(1e9, 2e9);
  w.ckpt_every_s = f.uniform(600, 1800);
  const auto p = make_capacity_plan(w, rows, nlohmann::json::array());
  const double bytes = hand_params(Shape{}) * 12;
  ASSERT_TRUE(p.ckpt_needed_gb_s);
  EXPECT_NEAR(*p.ckpt_needed_gb_s, bytes / (0.05 * *w.ckpt_every_s) / 1e9, 1e-12);
  const auto& s = p.series[0];
  for (const auto& c : s.counts) {
    const double bw = c.gpus == 1 ? bw1 : bw2;
    ASSERT_TRUE(c.ckpt_stall_s) << c.gpus;
    EXPECT_NEAR(*c.ckpt_stall_s, bytes / (bw * 1e9), 1e-12) << c.gpus;
    EXPECT_NEAR(*c.ckpt_stall_fraction, *c.ckpt_stall_s / *w.ckpt_every_s, 1e-15);
    const double train = w.tokens / (c.gpus * tokens / (step_us * 1e-6));
    EXPECT_NEAR(c.train_s, train + std::floor(train / *w.ckpt_every_s) * *c.ckpt_stall_s, 1e-6 * c.train_s) << c.gpus;
    if (c.gpus == 4) {
      EXPECT_NE(c.ckpt_source.find("held"), std::string::npos) << c.ckpt_source;
    }
  }
  // A checkpoint that takes more than 5% of its interval makes storage the bottleneck.
  w.ckpt_every_s = bytes / (bw1 * 1e9) / 0.06;
  const auto slow = make_capacity_plan(w, rows, nlohmann::json::array());
  EXPECT_EQ(slow.series[0].counts[0].bottleneck, "storage");
  EXPECT_NE(slow.series[0].first_bottleneck.find("storage at 1 GPUs"), std::string::npos) << slow.series[0].first_bottleneck;
}

TEST(CapacityPlan, TheBottleneckIsTheLargestPhaseOnTheLinkItCrosses) {
  Fixture f;
  const double share = f.uniform(0.25, 0.45), small = f.uniform(0.01, 0.15);
  std::vector<ResultRow> rows = {step_row(2, 1, 1000, 64, small), step_row(4, 1, 1000, 64, share),
                                 step_row(8, 2, 1000, 64, share)};
  PlanWorkload w;
  w.model = "llama3-8b";
  w.tokens = 1e6;
  const auto p = make_capacity_plan(w, rows, nlohmann::json::array());
  const auto& c = p.series[0].counts;
  EXPECT_EQ(c[0].bottleneck, "compute");
  EXPECT_EQ(c[1].bottleneck, "intra-node link");  // dp_comm inside one node
  EXPECT_EQ(c[2].bottleneck, "network");          // dp_comm across two
  EXPECT_NE(p.series[0].first_bottleneck.find("intra-node link at 4 GPUs"), std::string::npos);
}

TEST(CapacityPlan, PowerFromTheRowsOwnEnergyElseTheBurnInElseNone) {
  Fixture f;
  const double per_gpu = f.uniform(300, 700), a = 80, b = 2;
  std::vector<ResultRow> rows;
  for (int n : {1, 2, 4}) {
    rows.push_back(step_row(n, 1, (a + b * std::log2(n)) * 100, 100, 0.1));
    rows.back().metrics["avg_power_w"] = per_gpu * n;
    rows.back().metrics["energy_scope"] = "gpu";
  }
  PlanWorkload w;
  w.model = "llama3-8b";
  w.tokens = 1e8;
  const auto p = make_capacity_plan(w, rows, nlohmann::json::array());
  for (const auto& c : p.series[0].counts) {
    ASSERT_TRUE(c.power_w);
    EXPECT_NEAR(*c.power_w, per_gpu * c.gpus, 1e-9);
    EXPECT_NEAR(*c.energy_j, per_gpu * c.gpus * c.train_s, 1e-6 * *c.energy_j);
  }
  for (auto& r : rows) r.metrics.erase("avg_power_w");
  const double burn = f.uniform(200, 600);
  const nlohmann::json capacity = {{{"benchmark", "burn.gemm"}, {"power_per_gpu_w", burn}, {"power_per_node_w", nullptr}}};
  const auto q = make_capacity_plan(w, rows, capacity);
  EXPECT_NEAR(*q.series[0].counts.back().power_w, burn * 16, 1e-9);
  EXPECT_NE(q.power_source.find("burn-in"), std::string::npos);
}

TEST(CapacityPlan, RefusesWhatTheRowsCannotSupport) {
  std::vector<ResultRow> rows = {step_row(1, 1, 1000, 64, 0.1), step_row(2, 1, 1100, 64, 0.1)};
  PlanWorkload w;
  w.model = "llama3-70b";
  w.tokens = 1e9;
  try {
    make_capacity_plan(w, rows, nlohmann::json::array());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no train-step rows of llama3-70b"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("it has llama3-8b"), std::string::npos) << e.what();
  }
  w.model = "llama3-8b";
  // Two measured counts: no model to extrapolate with, so nothing beyond them.
  const auto p = make_capacity_plan(w, rows, nlohmann::json::array());
  EXPECT_EQ(p.series[0].counts.size(), 2u);
  EXPECT_NE(p.series[0].limit_why.find("not projected"), std::string::npos) << p.series[0].limit_why;
  // The same point twice (two files of one run): refused, not averaged.
  rows.push_back(rows[1]);
  EXPECT_THROW(make_capacity_plan(w, rows, nlohmann::json::array()), Error);
  w.tokens = 0;
  EXPECT_THROW(make_capacity_plan(w, {}, nlohmann::json::array()), Error);
}

TEST(CapacityPlan, EveryFormatCarriesTheFiguresAndMarksProjections) {
  std::vector<ResultRow> rows;
  for (int n : {1, 2, 4}) rows.push_back(step_row(n, 1, (80 + 3 * std::log2(n)) * 64, 64, 0.1));
  PlanWorkload w;
  w.model = "llama3-8b";
  w.tokens = 1e12;
  const auto p = make_capacity_plan(w, rows, nlohmann::json::array());
  const auto text = plan_text(p, 80);
  EXPECT_NE(text.find("PROJECTED"), std::string::npos) << text;
  EXPECT_NE(text.find("fit error"), std::string::npos) << text;
  for (const auto& line : {text}) EXPECT_EQ(line.find('\x1b'), std::string::npos);
  EXPECT_NE(plan_markdown(p).find("| 16 |"), std::string::npos);
  EXPECT_NE(plan_html(p).find("<tr class=\"projected\">"), std::string::npos);
  const auto j = plan_json(p);
  EXPECT_EQ(j["series"][0]["counts"].size(), 5u);
  EXPECT_EQ(j["series"][0]["counts"][4]["source"], "projected");
  EXPECT_DOUBLE_EQ(j["series"][0]["counts"][0]["tokens_per_s"].get<double>(), p.series[0].counts[0].tokens_per_s);
}

}  // namespace
}  // namespace gpuscale
