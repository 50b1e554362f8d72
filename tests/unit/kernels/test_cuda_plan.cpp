// The CUDA device's host-side decisions (kernels/cuda/cuda_plan.h), without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>

#include <limits>
#include <random>

#include "test_seed.h"
#include "harness/benchmarks/burn/sdc_agreement.h"
#include "kernels/cuda/cuda_plan.h"

namespace gpuscale::cuda {
namespace {

constexpr std::uint64_t GiB = 1ULL << 30, MiB = 1ULL << 20;

TEST(ComputeCapability, ParsesAndFormats) {
  EXPECT_EQ(parse_cc("9.0"), (ComputeCapability{9, 0}));
  EXPECT_EQ(parse_cc("12.0"), (ComputeCapability{12, 0}));
  EXPECT_EQ(parse_cc("8.9")->value(), 89);
  EXPECT_EQ(format_cc({10, 0}), "10.0");
  for (const char* bad : {"", "9", "9.", ".0", "9.0.1", "x.0", "9.10", "0.5", "-1.0"})
    EXPECT_FALSE(parse_cc(bad)) << bad;
}

TEST(GridBlocks, FillsEverySmAtTheKernelsOccupancy) {
  // H200: 132 SMs x 8 resident blocks of 256 threads; plenty of work.
  EXPECT_EQ(grid_blocks(132, 8, 256, 1ULL << 28, 2), 132 * 8);
  EXPECT_EQ(grid_blocks(108, 4, 256, 1ULL << 30, 4), 108 * 4);
}

TEST(GridBlocks, NeverMoreBlocksThanVectorsOfWork) {
  EXPECT_EQ(grid_blocks(132, 8, 256, 1000, 4), 1);      // 250 vectors: one block
  EXPECT_EQ(grid_blocks(132, 8, 256, 256 * 4 + 1, 4), 2);  // 257 vectors: two blocks
  EXPECT_EQ(grid_blocks(132, 8, 256, 0, 4), 1);         // at least one block
  EXPECT_EQ(grid_blocks(0, 0, 256, 1ULL << 30, 2), 1);  // a failed occupancy query still gives a grid
}

TEST(StreamArraySizing, AtLeastEightTimesL2AndOneGiB) {
  // H200: 60 MiB L2 -> 480 MiB would be 8x L2; the 1 GiB floor wins.
  auto s = default_stream_array_bytes(60 * MiB, 140 * GiB);
  EXPECT_EQ(s.bytes, 1 * GiB);
  EXPECT_FALSE(s.capped);
  // A GPU with a 256 MiB cache: 8x L2 = 2 GiB.
  s = default_stream_array_bytes(256 * MiB, 140 * GiB);
  EXPECT_EQ(s.bytes, 2 * GiB);
  EXPECT_GE(s.bytes, 8 * 256 * MiB);
}

TEST(StreamArraySizing, CappedSoThreeArraysTakeAtMostHalfTheFreeMemory) {
  const auto s = default_stream_array_bytes(50 * MiB, 3 * GiB);
  EXPECT_TRUE(s.capped);
  EXPECT_LE(3 * s.bytes, 3 * GiB / 2);
  EXPECT_EQ(s.bytes % (2 * MiB), 0u);
  EXPECT_GT(s.bytes, 0u);
  EXPECT_GT(default_stream_array_bytes(50 * MiB, 0).bytes, 0u);
}

TEST(MemoryShortfall, NamesTheSizeAndTheFreeMemoryBeforeAllocating) {
  EXPECT_FALSE(memory_shortfall("x", 1 * GiB, 4 * GiB, 0));
  const auto why = memory_shortfall("STREAM fp64: 3 arrays of 4.00 GiB (4294967296 bytes)", 12 * GiB, 10 * GiB, 3);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("STREAM fp64: 3 arrays of 4.00 GiB"), std::string::npos) << *why;
  EXPECT_NE(why->find("12.00 GiB (12884901888 bytes)"), std::string::npos) << *why;
  EXPECT_NE(why->find("GPU 3 has 10.00 GiB (10737418240 bytes) free"), std::string::npos) << *why;
  // The headroom for the context and libraries counts: exactly the free memory does not fit.
  EXPECT_TRUE(memory_shortfall("x", 4 * GiB, 4 * GiB, 0));
  EXPECT_TRUE(memory_shortfall("x", 1, 0, 0));
  // Sizes that overflow 64 bits never fit.
  const auto huge = memory_shortfall("x", saturating_mul(1ULL << 40, 1ULL << 40), 80 * GiB, 0);
  ASSERT_TRUE(huge);
  EXPECT_NE(huge->find("more than 2^64 bytes"), std::string::npos);
}

TEST(BuildRunsOn, MachineCodeRunsOnItsMajorAtEqualOrHigherMinor) {
  const char* archs = "80-real;86-real;89-real;90-real;100-real;120";
  EXPECT_TRUE(build_runs_on(archs, {8, 0}));
  EXPECT_TRUE(build_runs_on(archs, {8, 7}));   // sm_86 code runs on 8.7
  EXPECT_TRUE(build_runs_on(archs, {9, 0}));
  EXPECT_TRUE(build_runs_on(archs, {10, 3}));  // sm_100 code runs on 10.3
  EXPECT_TRUE(build_runs_on(archs, {12, 1}));  // sm_120 code and PTX
  EXPECT_TRUE(build_runs_on(archs, {13, 0}));  // PTX for compute_120 is JIT-compiled on newer GPUs
  EXPECT_FALSE(build_runs_on(archs, {7, 0}));  // V100: nothing old enough
  EXPECT_FALSE(build_runs_on(archs, {11, 0})); // no sm_11x code, and PTX 12.0 is newer than 11.0
}

TEST(BuildRunsOn, QuickBuildsAndArchSpecificVariants) {
  EXPECT_TRUE(build_runs_on("80-real,90-real", {9, 0}));  // as the binary carries the list
  EXPECT_TRUE(build_runs_on("90", {9, 0}));     // real + PTX
  EXPECT_TRUE(build_runs_on("90", {10, 0}));    // through the PTX
  EXPECT_FALSE(build_runs_on("90", {8, 9}));
  EXPECT_FALSE(build_runs_on("90-real", {10, 0}));  // no PTX to fall back on
  EXPECT_TRUE(build_runs_on("90a-real", {9, 0}));
  EXPECT_FALSE(build_runs_on("90a-real", {9, 1}));  // "a" code runs on exactly 9.0
  EXPECT_TRUE(build_runs_on("70-virtual", {8, 0}));
  EXPECT_FALSE(build_runs_on("", {9, 0}));
  EXPECT_FALSE(build_runs_on("native", {9, 0}));  // not resolvable here
}

TEST(GemmDtypeSupport, ByComputeCapability) {
  EXPECT_FALSE(gemm_dtype_unsupported(DType::fp64, {7, 0}));
  EXPECT_FALSE(gemm_dtype_unsupported(DType::fp32, {7, 0}));
  EXPECT_FALSE(gemm_dtype_unsupported(DType::fp16, {7, 0}));
  EXPECT_TRUE(gemm_dtype_unsupported(DType::bf16, {7, 0}));
  EXPECT_TRUE(gemm_dtype_unsupported(DType::tf32, {7, 5}));
  EXPECT_FALSE(gemm_dtype_unsupported(DType::bf16, {8, 0}));
  EXPECT_FALSE(gemm_dtype_unsupported(DType::int8, {8, 0}));
  // fp8 (e4m3): Ada and Hopper onwards, not Ampere.
  const auto a100 = gemm_dtype_unsupported(DType::fp8_e4m3, {8, 0});
  ASSERT_TRUE(a100);
  EXPECT_NE(a100->find("8.9"), std::string::npos) << *a100;
  EXPECT_NE(a100->find("this GPU is 8.0"), std::string::npos) << *a100;
  EXPECT_TRUE(gemm_dtype_unsupported(DType::fp8_e4m3, {8, 6}));
  EXPECT_FALSE(gemm_dtype_unsupported(DType::fp8_e4m3, {8, 9}));
  EXPECT_FALSE(gemm_dtype_unsupported(DType::fp8_e4m3, {9, 0}));
  EXPECT_FALSE(gemm_dtype_unsupported(DType::fp8_e4m3, {12, 0}));
  EXPECT_TRUE(gemm_dtype_unsupported(DType::fp8_e5m2, {9, 0}));
  EXPECT_TRUE(gemm_dtype_unsupported(DType::int32, {9, 0}));
}

TEST(GemmLayoutSupport, Fp8TakesOnlyTnBeforeBlackwell) {
  const GemmShape nn{4096, 4096, 4096, false, false}, tn{4096, 4096, 4096, true, false};
  const auto why = gemm_layout_unsupported(DType::fp8_e4m3, {9, 0}, nn);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("4096x4096x4096:TN"), std::string::npos) << *why;
  EXPECT_FALSE(gemm_layout_unsupported(DType::fp8_e4m3, {9, 0}, tn));
  EXPECT_FALSE(gemm_layout_unsupported(DType::fp8_e4m3, {10, 0}, nn));
  EXPECT_FALSE(gemm_layout_unsupported(DType::bf16, {9, 0}, nn));
  // A shape without a layout suffix takes each dtype's default (TN for fp8 and int8); an explicit one is kept.
  EXPECT_FALSE(parse_gemm_shape("8192").layout_given);
  EXPECT_TRUE(parse_gemm_shape("8192:NN").layout_given);
  EXPECT_TRUE(parse_gemm_shape("8192x8192x1024:TN").trans_a);
  EXPECT_TRUE(gemm_default_transpose_a(DType::fp8_e4m3));
  EXPECT_TRUE(gemm_default_transpose_a(DType::int8));
  EXPECT_FALSE(gemm_default_transpose_a(DType::bf16));
}

TEST(GemmMemory, CountsEveryMatrixAtItsTypeWithoutWrapping) {
  EXPECT_EQ(gemm_output_type(DType::fp8_e4m3), DType::bf16);
  EXPECT_EQ(gemm_output_type(DType::int8), DType::int32);
  EXPECT_EQ(gemm_output_type(DType::tf32), DType::tf32);
  const GemmShape s{8192, 4096, 1024, false, false};
  // A 8192x1024 + B 1024x4096 at 2 bytes, C 8192x4096 at 2 bytes, plus the workspace.
  EXPECT_EQ(gemm_device_bytes(DType::bf16, s, 32 * MiB), (8192ULL * 1024 + 1024ULL * 4096 + 8192ULL * 4096) * 2 + 32 * MiB);
  // int8: 1-byte inputs, 4-byte output.
  EXPECT_EQ(gemm_device_bytes(DType::int8, s, 0), 8192ULL * 1024 + 1024ULL * 4096 + 8192ULL * 4096 * 4);
  // 16384^3 fp64: 3 x 2 GiB.
  EXPECT_EQ(gemm_device_bytes(DType::fp64, {16384, 16384, 16384}, 0), 6 * GiB);
  const GemmShape huge{1ULL << 40, 1ULL << 40, 1ULL << 40};
  EXPECT_EQ(gemm_device_bytes(DType::fp32, huge, 0), std::numeric_limits<std::uint64_t>::max());
}

// The SDC digest's config holds everything that decides a GEMM's bits: two GPUs that differ in any of
// it may differ in bits without a fault, so the agreement check compares them with no one.
TEST(GemmBitsConfig, EveryFieldThatDecidesTheBitsSeparatesConfigurations) {
  const GemmBitsConfig h100{"cuBLASLt 13.0.0", "NVIDIA H100 80GB HBM3", {9, 0}, 132,
                            R"({"algo_id":66,"cluster_shape_id":0,"inner_shape_id":0,"tile_id":18})", "fp32", "bf16"};
  const auto base = gemm_bits_config(h100);
  EXPECT_EQ(gemm_bits_config(h100), base);
  auto c = h100;
  c.sm_count = 114;
  EXPECT_NE(gemm_bits_config(c), base) << "SM count";
  c = h100;
  c.library = "cuBLASLt 12.9.1";
  EXPECT_NE(gemm_bits_config(c), base) << "library version";
  c = h100;
  c.cc = {10, 0};
  EXPECT_NE(gemm_bits_config(c), base) << "compute capability";
  c = h100;
  c.device_name = "NVIDIA H100 PCIe";
  EXPECT_NE(gemm_bits_config(c), base) << "device name";
  c = h100;
  c.algorithm = R"({"algo_id":66,"cluster_shape_id":2,"inner_shape_id":0,"tile_id":18})";
  EXPECT_NE(gemm_bits_config(c), base) << "cluster shape";
}

TEST(GemmBitsConfig, AMixedFleetIsComparedWithinEachConfiguration) {
  // Seeded: how many ranks of each SM count, and each configuration's own (fault-free) bits.
  std::mt19937_64 rng(test_seed());
  GemmBitsConfig sxm{"cuBLASLt 13.0.0", "NVIDIA H100", {9, 0}, 132, R"({"algo_id":66})", "fp32", "bf16"};
  GemmBitsConfig fewer = sxm;
  fewer.sm_count = 114;  // the same name, architecture and library: only the SM count differs
  const int a = std::uniform_int_distribution<int>(2, 6)(rng), b = std::uniform_int_distribution<int>(1, a - 1)(rng);
  const std::vector<std::uint64_t> bits_sxm = {rng(), rng()}, bits_fewer = {rng(), rng()};
  std::vector<std::uint64_t> configs;
  std::vector<std::vector<std::uint64_t>> digests;
  for (int r = 0; r < a + b; ++r) {
    configs.push_back(gemm_bits_config(r < a ? sxm : fewer));
    digests.push_back(r < a ? bits_sxm : bits_fewer);
  }
  const auto verdicts = sdc_agreement(configs, digests);
  for (int r = 0; r < a + b; ++r) {
    EXPECT_NE(verdicts[static_cast<std::size_t>(r)].status, SdcStatus::disagrees) << "rank " << r << " of " << a << "+" << b;
    EXPECT_EQ(verdicts[static_cast<std::size_t>(r)].compared, r < a ? a : b) << "rank " << r;
  }
}

TEST(GemmAlgorithmChoice, FastestThatRanWins) {
  std::vector<GemmCandidate> c = {{0, 2e-3, ""}, {1, 1e-3, ""}, {2, 5e-4, "cublasLtMatmul failed: ..."},
                                  {3, 1.5e-3, ""}, {4, 0, ""}};
  EXPECT_EQ(fastest_candidate(c), 1u);  // 2 failed, 4 measured nothing
  c[3].seconds = 1e-3;                  // a tie: the heuristic's earlier answer wins
  EXPECT_EQ(fastest_candidate(c), 1u);
  EXPECT_FALSE(fastest_candidate({}));
  EXPECT_FALSE(fastest_candidate({{0, 0, "x"}, {1, -1, ""}}));
}

TEST(GemmAlgorithmChoice, BatchesShortProductsIntoTimingsOfAboutTwoMilliseconds) {
  EXPECT_EQ(gemm_batch(1e-3), 2);
  EXPECT_EQ(gemm_batch(4e-6), 500);
  EXPECT_EQ(gemm_batch(1e-9), 1000);  // capped
  EXPECT_EQ(gemm_batch(0.5), 1);
  EXPECT_EQ(gemm_batch(0), 1);
}

TEST(CudaErrors, OneLineWithTheCallTheErrorAndItsName) {
  EXPECT_EQ(call_failure("cudaMemcpy", "out of memory", "cudaErrorMemoryAllocation"),
            "cudaMemcpy failed: out of memory (cudaErrorMemoryAllocation)");
  EXPECT_EQ(call_failure("cublasLtMatmul", "the requested functionality is not supported", ""),
            "cublasLtMatmul failed: the requested functionality is not supported");
}

TEST(CudaPlan, SplitKReductionRoundsOnlyInTheComputeTypeForNarrowOutputs) {
  // Narrow C (bf16, fp16, fp8's bf16): only the scheme that keeps partial sums in fp32.
  for (DType t : {DType::bf16, DType::fp16, DType::fp8_e4m3}) {
    EXPECT_EQ(gemm_reduction_scheme_mask(t), kReduceComputeType) << dtype_name(t);
    EXPECT_EQ(gemm_reduction_scheme_mask(t) & (kReduceInplace | kReduceOutputType), 0u) << dtype_name(t);
  }
  // C as precise as the compute type: every scheme.
  for (DType t : {DType::fp64, DType::fp32, DType::tf32, DType::int8})
    EXPECT_EQ(gemm_reduction_scheme_mask(t), kReduceAll) << dtype_name(t);
  for (DType t : {DType::fp64, DType::bf16, DType::fp16, DType::fp32})
    EXPECT_EQ(gemm_reduction_scheme_mask(t, true), 0u) << dtype_name(t) << ": a fixed algorithm has no split-K";
  EXPECT_EQ(reduction_scheme_names(kReduceComputeType), "compute_type");
  EXPECT_EQ(reduction_scheme_names(kReduceAll), "inplace|compute_type|output_type");
  EXPECT_EQ(reduction_scheme_names(0), "none");
}

TEST(CudaPlan, GemmWarmupKeepsTheGpuBusyLongEnoughForTheClocks) {
  EXPECT_EQ(gemm_warmup_products(0.01), 20);      // 10 ms products: 20 of them fill 0.2 s
  EXPECT_EQ(gemm_warmup_products(1e-5), 20000);   // 10 us products: 0.2 s
  EXPECT_EQ(gemm_warmup_products(1e-7), 20000);   // capped
  EXPECT_EQ(gemm_warmup_products(1.0), 1);        // one long product is warm-up enough
  EXPECT_EQ(gemm_warmup_products(0.0), 1);        // a failed first timing still warms up once
  EXPECT_GE(gemm_warmup_products(2e-5) * 2e-5, kGemmWarmupSeconds * (1 - 1e-9));
}

// A simulated GPU whose clocks rise during the warm-up: the rounds keep it busy for the fixed time,
// whatever the first product cost (lazy loading is not counted), and always end.
TEST(CudaPlan, GemmWarmupRunsAFixedTimeInRoundsThatEnd) {
  std::mt19937_64 rng(test_seed());
  for (int trial = 0; trial < 200; ++trial) {
    double per = 1e-6 * static_cast<double>(1 + rng() % 20000);  // 1 us .. 20 ms at idle clocks
    const double speedup = 1.0 + static_cast<double>(rng() % 100) / 100;  // up to 2x faster when warm
    double warmed = 0;
    int n = 1, rounds = 0;
    for (int round = 0; n > 0; ++round) {
      warmed += n * per;
      per = std::max(per / speedup, 1e-7);
      ++rounds;
      n = gemm_warmup_next(warmed, per * speedup, round);
      ASSERT_GE(n, 0);
    }
    EXPECT_LE(rounds, kGemmWarmupRounds + 1);
    // Each round plans at the last round's speed and the clocks rise meanwhile, so the rounds close in
    // on the time (products of 10 us and more: the per-round cap of 20000 is no limit); never far past it.
    if (per > 1e-5) {
      EXPECT_GE(warmed, 0.95 * kGemmWarmupSeconds) << "per " << per;
    }
    EXPECT_LE(warmed, kGemmWarmupSeconds + 0.02 * speedup) << "per " << per;
  }
  EXPECT_EQ(gemm_warmup_next(kGemmWarmupSeconds, 1e-3, 0), 0);
  EXPECT_EQ(gemm_warmup_next(0.1, 1e-3, 0), 100);   // the rest of the time at the last round's speed
  EXPECT_EQ(gemm_warmup_next(0.0, 1e-3, kGemmWarmupRounds), 0);
}

TEST(CudaPlan, TheRankIsBoundBeforeItsDeviceAndContext) {
  // Issue 25, item 5: binding after cudaFree(nullptr) left the driver's threads and the context's host
  // allocations on the launcher's cores.
  const auto at = [](DeviceOpenStep s) {
    const auto* it = std::find(std::begin(kDeviceOpenOrder), std::end(kDeviceOpenOrder), s);
    EXPECT_NE(it, std::end(kDeviceOpenOrder)) << "a step missing from the order";
    return it - std::begin(kDeviceOpenOrder);
  };
  EXPECT_EQ(std::size(kDeviceOpenOrder), 4u);
  EXPECT_LT(at(DeviceOpenStep::read_pci_bus_id), at(DeviceOpenStep::bind_cpus));  // the binding needs the bus id
  EXPECT_LT(at(DeviceOpenStep::bind_cpus), at(DeviceOpenStep::set_device));
  EXPECT_LT(at(DeviceOpenStep::bind_cpus), at(DeviceOpenStep::create_context));
  EXPECT_LT(at(DeviceOpenStep::set_device), at(DeviceOpenStep::create_context));
}

}  // namespace
}  // namespace gpuscale::cuda
