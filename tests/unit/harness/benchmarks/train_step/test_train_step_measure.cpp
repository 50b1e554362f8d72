// harness/benchmarks/train_step/train_step_measure: one step runs each GEMM of the program once and is
// timed on the device's clock. The device double batches its timed call as the CUDA GEMM does (a graph
// of products per run(), the seconds of one returned), and its clock moves only by the work it runs,
// so the step's tokens/s can be compared with what the program's GEMMs really cost.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <memory>
#include <random>

#include "harness/benchmarks/train_step/train_step_measure.h"
#include "kernels/device.h"
#include "test_seed.h"
#include "training/model_spec.h"
#include "training/parallel_layout.h"
#include "training/train_step_plan.h"

namespace gpuscale {
namespace {

// A GEMM whose timed call runs `batch` products (CUDA's graph) and returns the seconds of one.
class BatchedGemm final : public GemmProblem {
 public:
  BatchedGemm(double& clock, double seconds, int batch) : clock_(clock), seconds_(seconds), batch_(batch) {}
  double run() override {
    clock_ += seconds_ * batch_;
    return seconds_;
  }
  int products_per_call() const override { return batch_; }
  double run_one() override {
    clock_ += seconds_;
    return seconds_;
  }
  CheckResult verify() override { return {}; }

 private:
  double& clock_;
  double seconds_;
  int batch_;
};

// A device whose clock is the work it has run: each GEMM shape costs a random time per product.
class ClockedDevice final : public Device {
 public:
  ClockedDevice(std::uint64_t seed, int batch) : rng_(seed), batch_(batch) {}
  const DeviceInfo& info() const override { return info_; }
  double clock_s() override { return clock_; }
  std::vector<StreamOp> stream_ops() const override { return {}; }
  std::vector<DType> stream_dtypes() const override { return {}; }
  std::uint64_t default_stream_array_bytes() const override { return 0; }
  std::unique_ptr<StreamArrays> make_stream(DType, std::uint64_t, std::uint64_t) override { return nullptr; }
  std::vector<DType> gemm_dtypes() const override { return {DType::bf16}; }
  std::optional<std::string> gemm_unsupported(DType) const override { return std::nullopt; }
  std::unique_ptr<GemmProblem> make_gemm(DType, const GemmShape& s, std::uint64_t) override {
    const double per = std::uniform_real_distribution<double>(1e-5, 1e-3)(rng_);
    seconds_[format_gemm_shape(s)] = per;
    return std::make_unique<BatchedGemm>(clock_, per, batch_);
  }
  double seconds_of(const GemmShape& s) const { return seconds_.at(format_gemm_shape(s)); }

 private:
  DeviceInfo info_;
  std::mt19937_64 rng_;
  int batch_;
  double clock_ = 1000.0;  // an origin other than zero: the step is a difference of readings
  std::map<std::string, double> seconds_;
};

TEST(TrainStepMeasure, StepRunsEachGemmOnceOnTheDeviceClock) {
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const int batch = std::uniform_int_distribution<int>(2, 1000)(rng);
  ClockedDevice device(seed, batch);
  std::string why;
  const auto layout = resolve_layout(*parse_layout("dp", why), 1);
  ASSERT_TRUE(layout);
  const auto model = shrink_model(*model_preset("llama3-8b"), true, std::nullopt);
  const auto plan = make_train_step_plan(model, *layout, 0);
  ASSERT_FALSE(plan.gemms.empty());
  ASSERT_TRUE(plan.comms.empty());  // one rank: the program is its GEMMs

  StepWork work;
  for (std::size_t i = 0; i < plan.gemms.size(); ++i) work.gemms.push_back(device.make_gemm(model.dtype, plan.gemms[i].shape, i));
  double want = 0;  // the program's GEMMs, each once
  for (const auto& op : plan.program)
    if (op.gemm) want += device.seconds_of(plan.gemms[static_cast<std::size_t>(op.index)].shape);

  const StepComms comms;
  std::array<double, kTrainPhases> phase{};
  const double step = run_step(plan, work, comms, device, WorkPlace{}, phase);
  const double compute = phase[static_cast<std::size_t>(TrainPhase::compute)];
  EXPECT_NEAR(compute, want, want * 1e-9);
  EXPECT_NEAR(step, want, want * 1e-9) << "a batch of " << batch << " per GEMM call";
  const auto got = train_figures(plan, step, compute);
  const auto right = train_figures(plan, want, want);
  EXPECT_NEAR(got.tokens_per_s, right.tokens_per_s, right.tokens_per_s * 1e-9);
}

}  // namespace
}  // namespace gpuscale
