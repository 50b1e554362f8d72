// harness/sdc_agreement: ranks of one digest config agree bit for bit; the one that differs from the
// majority is named with its first differing block; without a majority no one is; other configs and
// ranks without a digest are not compared.
#include <gtest/gtest.h>

#include <random>

#include "harness/benchmarks/burn/sdc_agreement.h"
#include "kernels/output_digest.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

std::vector<std::uint64_t> digest(std::mt19937_64& gen, int blocks = 64) {
  std::vector<std::uint64_t> d;
  for (int i = 0; i < blocks; ++i) d.push_back(gen() & ((1ULL << 48) - 1));
  return d;
}

TEST(SdcAgreement, TheOneThatDiffersIsNamedWithItsFirstBlock) {
  std::mt19937_64 gen(7);
  for (int n : {3, 4, 8, 64}) {
    const auto good = digest(gen);
    std::vector<std::vector<std::uint64_t>> all(static_cast<std::size_t>(n), good);
    const int bad = n - 1, block = static_cast<int>(gen() % 64);
    all[bad][static_cast<std::size_t>(block)] ^= 1;  // one bit of one block
    const auto v = sdc_agreement(std::vector<std::uint64_t>(static_cast<std::size_t>(n), 42), all);
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(v[r].status, r == bad ? SdcStatus::disagrees : SdcStatus::agrees) << n << " " << r;
      EXPECT_EQ(v[r].agreeing, n - 1);
      EXPECT_EQ(v[r].compared, n);
    }
    EXPECT_EQ(v[bad].first_block, block);
  }
}

TEST(SdcAgreement, NoMajorityNamesNoOne) {
  std::mt19937_64 gen(8);
  const auto a = digest(gen), b = digest(gen), c = digest(gen);
  for (const auto& all : {std::vector<std::vector<std::uint64_t>>{a, b}, {a, a, b, b}, {a, b, c}}) {
    const auto v = sdc_agreement(std::vector<std::uint64_t>(all.size(), 1), all);
    for (const auto& x : v) {
      EXPECT_EQ(x.status, SdcStatus::no_majority);
      EXPECT_EQ(x.first_block, -1);
    }
  }
}

TEST(SdcAgreement, OnlyEqualConfigsAreComparedAndAMissingDigestIsNot) {
  std::mt19937_64 gen(9);
  const auto a = digest(gen), b = digest(gen);
  // Ranks 0-2 ran config 1 and agree; rank 3 ran config 2 (another algorithm): alone, not compared,
  // though its digest differs; rank 4 gave none.
  const auto v = sdc_agreement({1, 1, 1, 2, 1}, {a, a, a, b, {}});
  for (int r : {0, 1, 2}) EXPECT_EQ(v[r].status, SdcStatus::agrees);
  EXPECT_EQ(v[0].compared, 3);
  EXPECT_EQ(v[3].status, SdcStatus::not_compared);
  EXPECT_EQ(v[4].status, SdcStatus::not_compared);
  EXPECT_STREQ(sdc_status_name(v[3].status), "not compared");
}

TEST(SdcAgreement, TwoThatAgreeAreAMajorityOfTwo) {
  std::mt19937_64 gen(10);
  const auto a = digest(gen);
  const auto v = sdc_agreement({5, 5}, {a, a});
  EXPECT_EQ(v[0].status, SdcStatus::agrees);
  EXPECT_EQ(v[1].agreeing, 2);
}

// Narrowing: outputs of random sizes, one bit of one element flipped in one rank's copy (first, last or
// anywhere); the rounds of narrow_disagreement over range_digests_of end at exactly that element, in
// at most ceil(log64(block)) + 1 rounds. A witness is the lowest agreeing rank of the class.
TEST(SdcAgreement, NarrowingFindsTheFlippedElement) {
  std::mt19937_64 gen(test_seed());
  for (int trial = 0; trial < 300; ++trial) {
    const std::uint64_t n = 1 + gen() % 300000;
    std::vector<double> good(n);
    for (auto& x : good) x = std::uniform_real_distribution<double>(-1, 1)(gen);
    auto bad = good;
    const std::uint64_t element = trial % 3 == 0 ? 0 : trial % 3 == 1 ? n - 1 : gen() % n;
    flip_one_bit(bad.data(), n, sizeof(double), element + n * (gen() % 64));
    const auto dg = block_digests(good.data(), n, sizeof(double)), db = block_digests(bad.data(), n, sizeof(double));
    const auto v = sdc_agreement({7, 7, 7}, {dg, db, dg});
    ASSERT_EQ(v[1].status, SdcStatus::disagrees);
    EXPECT_EQ(majority_witness({7, 7, 7}, v, 1), 0);
    auto range = digest_block_range(n, static_cast<int>(db.size()), v[1].first_block);
    int rounds = 0;
    while (range.last - range.first > 1) {
      const auto next = narrow_disagreement(range, range_digests_of(bad.data(), n, 8, range.first, range.last),
                                            range_digests_of(good.data(), n, 8, range.first, range.last));
      ASSERT_TRUE(next) << "trial " << trial;
      range = *next;
      ASSERT_LE(++rounds, 4) << "trial " << trial;
    }
    EXPECT_EQ(range.first, element) << "trial " << trial << " of " << n << " elements";
  }
}

TEST(SdcAgreement, NarrowingNeedsTwoDigestsOfTheSameRangeThatDiffer) {
  std::mt19937_64 gen(11);
  const auto a = digest(gen);
  EXPECT_FALSE(narrow_disagreement({0, 4096}, a, a));       // they agree
  EXPECT_FALSE(narrow_disagreement({0, 4096}, a, {}));      // the witness gave none
  EXPECT_FALSE(narrow_disagreement({0, 10}, a, digest(gen)));  // more parts than elements
  const auto v = sdc_agreement({1, 1, 2}, {a, digest(gen), a});
  EXPECT_EQ(majority_witness({1, 1, 2}, v, 1), -1);  // a class of two that differ: no majority, no witness
}

}  // namespace
}  // namespace gpuscale
