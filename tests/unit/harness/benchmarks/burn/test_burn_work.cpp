// harness/benchmarks/burn/burn_work: a burn-in window's GEMM runs in the layout the gemm benchmark
// gives its type (TN for fp8 and int8, whose tensor-core GEMMs take only TN on Hopper), with the
// fixed algorithm the agreement check needs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "harness/benchmarks/burn/burn_work.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

TEST(BurnWork, GemmShapeTakesEachTypesLayout) {
  std::mt19937_64 rng(test_seed());
  const std::uint64_t n = std::uniform_int_distribution<std::uint64_t>(1, 16384)(rng);
  for (DType t : {DType::fp8_e4m3, DType::fp8_e5m2, DType::int8}) {
    const auto s = burn_gemm_shape(t, n);
    EXPECT_EQ(gemm_layout(s), "TN") << dtype_name(t);
    EXPECT_TRUE(s.fixed_algorithm);
    EXPECT_EQ(s.m, n);
    EXPECT_EQ(s.n, n);
    EXPECT_EQ(s.k, n);
  }
  for (DType t : {DType::fp64, DType::fp32, DType::tf32, DType::fp16, DType::bf16})
    EXPECT_EQ(gemm_layout(burn_gemm_shape(t, n)), "NN") << dtype_name(t);
}

// A transport that connects on its first operation (NCCL's lazy connection: seconds), then runs each
// operation in `per_op`: the batch is sized from the operations, not from the connection.
TEST(BurnWork, AllReduceBatchIsNotSizedByTheFirstOperationsConnection) {
  std::mt19937_64 rng(test_seed());
  const double per_op = std::uniform_real_distribution<double>(1e-5, 1e-3)(rng);
  const double connect = std::uniform_real_distribution<double>(1.0, 10.0)(rng);
  const double slice_s = std::uniform_real_distribution<double>(1.0, 60.0)(rng);
  int calls = 0;
  const auto timed = [&](int iters) {
    const double total = (calls++ == 0 ? connect : 0) + per_op * iters;
    return total / iters;
  };
  const int batch = all_reduce_batch(slice_s, timed, [](double v) { return v; });
  const int want = static_cast<int>(std::clamp(std::floor(slice_s / 10 / per_op), 1.0, 1e5));
  EXPECT_EQ(batch, want) << "per op " << per_op << " s, connection " << connect << " s, slice " << slice_s << " s";
  // The slowest rank sizes it for every rank.
  calls = 0;
  EXPECT_EQ(all_reduce_batch(slice_s, timed, [&](double) { return 2 * per_op; }),
            static_cast<int>(std::clamp(std::floor(slice_s / 10 / (2 * per_op)), 1.0, 1e5)));
}

}  // namespace
}  // namespace gpuscale
