// The NCCL collectives' kernels' twins: the fill against collective_input, the check against results
// built from the host's own expectation (collective_expected, collectives/collective_check.h), and
// the fault's flip.
#include <cstdint>
#include <vector>

#include "collectives/collective_check.h"
#include "collectives/collective_table.h"
#include "tests/emulated_gpu/kernels/twin_test_support.h"

namespace gpuscale_emu::test {
namespace {

using gpuscale::RedOp;

constexpr char kFill[] = "void gpuscale::nccl::device_code::fill_kernel<float>(float*, unsigned long, unsigned long, "
                         "gpuscale::RedOp, long, int, int, int)";
constexpr char kCheck[] = "void gpuscale::nccl::device_code::check_kernel<float>(float const*, unsigned long, "
                          "gpuscale::CollCheckPlan, unsigned long long*)";

gpuscale::CollCheckCase all_reduce_case(std::uint64_t count, int nranks) {
  return {gpuscale::Collective::all_reduce, gpuscale::DType::fp32, RedOp::sum, nranks, 0,
          gpuscale::CollCounts{count, count, count, 0, 0, {}}, 0xa11};
}

TEST(CollectiveTwins, FillWritesEachRanksInputs) {
  const int nranks = 4, rank = 2;
  std::uint64_t n = 10007, seed = 0xf111;
  RedOp op = RedOp::sum;
  std::int64_t range = gpuscale::collective_input_range(gpuscale::DType::fp32, op, nranks);
  int r = rank, nr = nranks, contributors = gpuscale::collective_contributors(gpuscale::DType::fp32, op, nranks);
  std::vector<float> p(n, -7.0f);
  float* pp = p.data();
  launch(twin(kFill), shape(132, 256), &pp, &n, &seed, &op, &range, &r, &nr, &contributors);
  for (std::uint64_t i = 0; i < n; ++i)
    ASSERT_EQ(p[i], static_cast<float>(gpuscale::collective_input(seed, op, range, rank, i, nranks, contributors))) << i;
}

TEST(CollectiveTwins, CheckCountsExactlyTheWrongElements) {
  const int nranks = 4, rank = 1;
  const auto c = all_reduce_case(10007, nranks);
  gpuscale::CollCheckPlan plan = gpuscale::collective_check_plan(c, rank);
  std::uint64_t n = c.counts.recv;
  std::vector<float> result(n);
  for (std::uint64_t i = 0; i < n; ++i) result[i] = static_cast<float>(gpuscale::collective_expected(c, rank, i));
  const float* pr = result.data();
  unsigned long long wrong = 0;
  unsigned long long* pw = &wrong;
  const auto* check = twin(kCheck);
  for (const LaunchShape& s : {shape(132, 256), shape(1, 64)}) {
    wrong = 0;
    launch(check, s, &pr, &n, &plan, &pw);
    EXPECT_EQ(wrong, 0u);
  }
  // Sums of small integers are exact, so one more is wrong at any tolerance.
  for (std::uint64_t i : {std::uint64_t{0}, std::uint64_t{5000}, n - 1}) result[i] += 1.0f;
  launch(check, shape(132, 256), &pr, &n, &plan, &pw);
  EXPECT_EQ(wrong, 3u);
}

TEST(CollectiveTwins, CheckCostCountsOnlyTheSampledBlocks) {
  const auto* check = twin(kCheck);
  float* none = nullptr;
  unsigned long long* pw = nullptr;
  gpuscale::CollCheckPlan plan{};
  plan.every = 1;
  std::uint64_t n = 10000;
  EXPECT_EQ(bytes(check, shape(1, 256), &none, &n, &plan, &pw), 10000.0 * 4);
  // Blocks of 1000: every third (0, 3, 6, 9) and the last (9): 4 blocks.
  plan.every = 3;
  plan.block = 1000;
  plan.count = n;
  EXPECT_EQ(bytes(check, shape(1, 256), &none, &n, &plan, &pw), 4 * 1000.0 * 4);
}

TEST(CollectiveTwins, CorruptFlipsTheFirstElement) {
  const auto* corrupt = twin("void gpuscale::nccl::device_code::corrupt_kernel<float>(float*)");
  std::vector<float> p = {3.0f, 4.0f};
  float* pp = p.data();
  launch(corrupt, shape(1, 1), &pp);
  EXPECT_EQ(p, (std::vector<float>{-1.0f, 4.0f}));
  launch(corrupt, shape(1, 1), &pp);
  EXPECT_EQ(p, (std::vector<float>{1.0f, 4.0f}));
}

}  // namespace
}  // namespace gpuscale_emu::test
