// harness/measurement_json: a rank's measurement reduced on the rank and encoded compactly. Random
// measurements come back exactly (every statistic bit for bit what rank 0 would compute from the
// repetitions), the group-wide figures travel from the group's first rank only, the encoding does not
// grow with the repetitions, and damaged bytes are refused.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "core/error.h"
#include "harness/rows/measurement_json.h"
#include "harness/rows/row_builder.h"

namespace gpuscale {
namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

RankMeasurement random_measurement(std::mt19937_64& rng) {
  RankMeasurement m;
  std::uniform_real_distribution<double> v(1e-3, 1e4);
  m.reps.resize(rng() % 12);  // none at times: an unmeasured rank
  for (auto& x : m.reps) x = v(rng);
  m.valid = rng() % 4 != 0;
  m.failed = rng() % 5 == 0;
  m.skipped = rng() % 7 == 0;
  if (rng() % 2) m.message = "error " + std::to_string(rng());
  m.metrics = {{"bytes", static_cast<std::uint64_t>(rng() % 100000)}, {"ratio", v(rng)}, {"label", "t" + std::to_string(rng() % 9)}};
  m.row_metrics = {{"busbw", v(rng)}, {"transport", "mpi"}};
  if (rng() % 2) m.aggregate = v(rng);
  return m;
}

TEST(MeasurementJson, RandomSummariesComeBackExactly) {
  std::mt19937_64 rng(1515);
  for (int trial = 0; trial < 300; ++trial) {
    const auto m = random_measurement(rng);
    const bool first = rng() % 2 == 0;
    const auto got = decode_summary(encode_summary(summarize(m, first)));
    ASSERT_EQ(got.stats.has_value(), !m.reps.empty());
    if (got.stats) {
      const RepStats want = compute_stats(m.reps);  // what rank 0 computed from every repetition before
      EXPECT_EQ(got.stats->n, want.n);
      EXPECT_TRUE(same_bits(got.stats->median, want.median));
      EXPECT_TRUE(same_bits(got.stats->min, want.min));
      EXPECT_TRUE(same_bits(got.stats->max, want.max));
      EXPECT_TRUE(same_bits(got.stats->mean, want.mean));
      EXPECT_TRUE(same_bits(got.stats->stddev, want.stddev));
    }
    EXPECT_EQ(got.valid, m.valid);
    EXPECT_EQ(got.failed, m.failed);
    EXPECT_EQ(got.skipped, m.skipped);
    EXPECT_EQ(got.message, m.message);
    EXPECT_EQ(got.metrics, m.metrics);
    if (first) {
      EXPECT_EQ(got.row_metrics, m.row_metrics);
      EXPECT_EQ(got.aggregate, m.aggregate);
    } else {  // identical on every member: only the first sends them
      EXPECT_TRUE(got.row_metrics.empty());
      EXPECT_FALSE(got.aggregate.has_value());
    }
  }
}

TEST(MeasurementJson, RowFromSummariesIsTheRowFromRepetitions) {
  // The row builder's value is the median of the repetitions: from the summaries it is the same
  // number, so the aggregate is the same sum.
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> v(50, 150);
  RowInputs in;
  in.benchmark = "stream.triad";
  in.unit = "GB/s";
  in.gpu_count = 5;
  double sum = 0;
  for (int r = 0; r < 5; ++r) {
    RankMeasurement m;
    m.reps.resize(3 + rng() % 5);
    for (auto& x : m.reps) x = v(rng);
    sum += median_of(m.reps);
    in.ranks.push_back({r, "h", r, decode_summary(encode_summary(summarize(m, r == 0)))});
  }
  const auto row = build_row(in);
  ASSERT_TRUE(row.aggregate.has_value());
  double want = 0;
  for (const auto& rv : row.ranks) want += *rv.value;
  EXPECT_TRUE(same_bits(*row.aggregate, want));
  EXPECT_NEAR(*row.aggregate, sum, 1e-9 * sum);
}

TEST(MeasurementJson, EncodingDoesNotGrowWithRepetitions) {
  std::mt19937_64 rng(3);
  RankMeasurement few, many;
  few.reps = {1.5, 2.5, 3.5};
  for (int i = 0; i < 5000; ++i) many.reps.push_back(static_cast<double>(rng() % 1000) / 7.0);
  // Six statistics at most 9 bytes each, whatever the count (exactly representable ones take fewer).
  EXPECT_LT(encode_summary(summarize(few, false)).size(), 80u);
  EXPECT_LT(encode_summary(summarize(many, false)).size(), 80u);
}

TEST(MeasurementJson, DamagedBytesAreRefused) {
  RankMeasurement m;
  m.reps = {1, 2, 3};
  m.message = "something";
  const auto bytes = encode_summary(summarize(m, true));
  EXPECT_THROW(decode_summary(bytes.substr(0, bytes.size() - 3)), Error);
  EXPECT_THROW(decode_summary("not msgpack at all"), Error);
  EXPECT_THROW(decode_summary(""), Error);
}

}  // namespace
}  // namespace gpuscale
