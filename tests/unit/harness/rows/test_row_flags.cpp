// harness/row_flags: which built rows are flagged (cache-resident footprint, above the peak,
// superlinear scaling, --quick) and that the reason names the likely cause.
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "harness/rows/row_flags.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

// An ok row of k ranks whose repetitions spread by `spread` around `per_rank` (relative, both ways).
ResultRow ok_row(int k, double per_rank, double spread, const std::string& unit = "GB/s") {
  ResultRow r;
  r.benchmark = "stream.triad";
  r.scope = "independent";
  r.gpu_count = k;
  r.unit = unit;
  r.status = RowStatus::ok;
  for (int i = 0; i < k; ++i) {
    RankValue v;
    v.rank = i;
    v.host = "node0";
    v.stats = compute_stats({per_rank * (1 - spread), per_rank, per_rank * (1 + spread)});
    v.value = v.stats.median;
    r.ranks.push_back(v);
  }
  r.aggregate = per_rank * k;
  r.peak_source = "test datasheet";
  return r;
}

// A copy: the flags are usually a temporary that ends with the full expression.
std::optional<RowFlag> find(const std::vector<RowFlag>& flags, const std::string& kind) {
  for (const auto& f : flags)
    if (f.kind == kind) return f;
  return std::nullopt;
}

FlagContext stream_context(std::uint64_t footprint, std::uint64_t cache, int sharing = 1) {
  FlagContext c;
  c.memory_benchmark = true;
  c.footprint_bytes = footprint;
  c.cache_bytes = cache;
  c.cache_name = "L3";
  c.ranks_sharing_cache = sharing;
  return c;
}

TEST(RowFlags, StreamFootprintUnderFourTimesTheCacheIsACacheFigure) {
  std::mt19937_64 rng(test_seed());
  const std::uint64_t cache = (std::uniform_int_distribution<std::uint64_t>(8, 512)(rng)) << 20;
  const auto row = ok_row(1, std::uniform_real_distribution<double>(10, 500)(rng), 0.01);
  const std::uint64_t under = static_cast<std::uint64_t>(kCacheFootprintFactor * static_cast<double>(cache)) - 1;
  const auto flags = row_flags(row, stream_context(under, cache));
  const auto f = find(flags, "cache_resident");
  ASSERT_NE(f, std::nullopt);
  EXPECT_NE(f->reason.find("L3"), std::string::npos) << f->reason;
  EXPECT_NE(f->reason.find("not memory"), std::string::npos) << f->reason;
  EXPECT_EQ(find(row_flags(row, stream_context(4 * cache, cache)), "cache_resident"), std::nullopt);
  // An unknown cache, or no footprint, says nothing.
  EXPECT_TRUE(row_flags(row, stream_context(under, 0)).empty());
  auto ctx = stream_context(under, cache);
  ctx.footprint_bytes.reset();
  EXPECT_TRUE(row_flags(row, ctx).empty());
  // Not a memory benchmark (a collective's buffers): no cache flag by itself.
  ctx = stream_context(under, cache);
  ctx.memory_benchmark = false;
  EXPECT_EQ(find(row_flags(row, ctx), "cache_resident"), std::nullopt);
}

TEST(RowFlags, RanksSharingTheCacheAddTheirFootprints) {
  const std::uint64_t cache = 32ULL << 20;
  const auto row = ok_row(2, 50, 0.01);
  // 1.5x the cache per rank: two ranks on the node still fit under 4x, three do not.
  const std::uint64_t footprint = 3 * cache / 2;
  EXPECT_NE(find(row_flags(row, stream_context(footprint, cache, 1)), "cache_resident"), std::nullopt);
  const auto f = find(row_flags(row, stream_context(footprint, cache, 2)), "cache_resident");
  ASSERT_NE(f, std::nullopt);
  EXPECT_NE(f->reason.find("2 ranks"), std::string::npos) << f->reason;
  EXPECT_EQ(find(row_flags(row, stream_context(footprint, cache, 3)), "cache_resident"), std::nullopt);
}

TEST(RowFlags, AboveThePeakBeyondTheNoiseIsFlaggedWithItsLikelyCause) {
  std::mt19937_64 rng(test_seed());
  const double spread = std::uniform_real_distribution<double>(0.0, 0.1)(rng);
  auto row = ok_row(1, 100, spread);
  row.expected_peak = 100 / (1 + kFlagNoiseFloor + spread + 0.02);  // above the peak, beyond the noise
  row.fraction_of_peak = *row.aggregate / *row.expected_peak;
  FlagContext none;
  auto f = find(row_flags(row, none), "above_peak");
  ASSERT_NE(f, std::nullopt);
  EXPECT_NE(f->reason.find("peak is likely wrong"), std::string::npos) << f->reason;
  EXPECT_NE(f->reason.find("test datasheet"), std::string::npos) << "the peak's source is named: " << f->reason;
  // From cache: the footprint is the likely cause.
  f = find(row_flags(row, stream_context(1 << 20, 32 << 20)), "above_peak");
  ASSERT_NE(f, std::nullopt);
  EXPECT_NE(f->reason.find("from cache"), std::string::npos) << f->reason;
  // A TFLOP/s figure is not made faster by a cache: the peak is blamed.
  auto gemm = ok_row(1, 100, spread, "TFLOP/s");
  gemm.expected_peak = row.expected_peak;
  gemm.fraction_of_peak = row.fraction_of_peak;
  f = find(row_flags(gemm, stream_context(1 << 20, 32 << 20)), "above_peak");
  ASSERT_NE(f, std::nullopt);
  EXPECT_NE(f->reason.find("peak is likely wrong"), std::string::npos) << f->reason;
  // A collective's own note (NVLS: busbw counts bytes the links did not carry) is the reason given.
  row.metrics["busbw_note"] = "NVLS may reduce in the switch";
  f = find(row_flags(row, none), "above_peak");
  ASSERT_NE(f, std::nullopt);
  EXPECT_NE(f->reason.find("NVLS may reduce in the switch"), std::string::npos) << f->reason;
  row.metrics.erase("busbw_note");
  // Within the noise: not flagged.
  row.expected_peak = 100 / (1 + (kFlagNoiseFloor + spread) / 2);
  row.fraction_of_peak = *row.aggregate / *row.expected_peak;
  EXPECT_EQ(find(row_flags(row, none), "above_peak"), std::nullopt);
}

TEST(RowFlags, SuperlinearScalingIsFlaggedExceptAtOneGpuAndForPeakEfficiencies) {
  std::mt19937_64 rng(test_seed());
  const int k = std::uniform_int_distribution<int>(2, 16)(rng);
  auto row = ok_row(k, 100, 0.01);
  row.scaling_efficiency = std::uniform_real_distribution<double>(1.2, 3.0)(rng);
  FlagContext none;
  const auto f = find(row_flags(row, none), "superlinear");
  ASSERT_NE(f, std::nullopt);
  EXPECT_NE(f->reason.find(std::to_string(k) + " x the 1-GPU figure"), std::string::npos) << f->reason;
  EXPECT_NE(f->reason.find("1-GPU reference is likely low"), std::string::npos) << f->reason;
  FlagContext peak;
  peak.efficiency_is_peak = true;  // a collective's efficiency is its fraction of the peak: above_peak says it
  EXPECT_EQ(find(row_flags(row, peak), "superlinear"), std::nullopt);
  row.scaling_efficiency = 1 + kFlagNoiseFloor / 2;  // within the noise
  EXPECT_EQ(find(row_flags(row, none), "superlinear"), std::nullopt);
  auto one = ok_row(1, 100, 0.01);
  one.scaling_efficiency = 1.5;
  EXPECT_EQ(find(row_flags(one, none), "superlinear"), std::nullopt);
}

TEST(RowFlags, QuickRowsSaySoAndRowsWithoutAFigureCarryNone) {
  auto row = ok_row(2, 100, 0.01);
  FlagContext quick;
  quick.quick = true;
  const auto flags = row_flags(row, quick);
  ASSERT_EQ(flags.size(), 1u);
  EXPECT_EQ(flags[0].kind, "quick");
  EXPECT_NE(flags[0].reason.find("--quick"), std::string::npos);
  for (RowStatus s : {RowStatus::invalid, RowStatus::failed, RowStatus::skipped}) {
    row.status = s;
    row.fraction_of_peak = 5.0;
    EXPECT_TRUE(row_flags(row, quick).empty()) << row_status_name(s);
  }
}

TEST(RowFlags, FlagsComeInTheirFixedOrder) {
  auto row = ok_row(2, 100, 0.01);
  row.expected_peak = 50;
  row.fraction_of_peak = 2.0;
  row.scaling_efficiency = 2.0;
  auto ctx = stream_context(1 << 20, 32 << 20);
  ctx.quick = true;
  std::vector<std::string> kinds;
  for (const auto& f : row_flags(row, ctx)) kinds.push_back(f.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"cache_resident", "above_peak", "superlinear", "quick"}));
}

}  // namespace
}  // namespace gpuscale
