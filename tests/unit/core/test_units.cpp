// core/units: size strings (nccl-tests style), positive counts, lists, size formatting and sweeps.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/units.h"

namespace gpuscale {
namespace {

using u64 = std::uint64_t;
constexpr u64 kMax = std::numeric_limits<u64>::max();

// Runs `f`, expecting a gpuscale::Error (usage exit code) whose message contains every fragment.
template <typename F>
void expect_error(F f, const std::vector<std::string>& fragments) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << fragments.front() << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.exit_code(), kExitUsage) << msg;
    for (const auto& frag : fragments)
      EXPECT_NE(msg.find(frag), std::string::npos) << "'" << frag << "' not in: " << msg;
  }
}

void expect_size_error(const std::string& text, const std::string& why) {
  SCOPED_TRACE("parse_size('" + text + "')");
  expect_error([&] { parse_size(text, "--size"); }, {"--size", "'" + text + "'", why});
}

TEST(ParseSize, PlainNumbers) {
  EXPECT_EQ(parse_size("1", "x"), 1u);
  EXPECT_EQ(parse_size("8", "x"), 8u);
  EXPECT_EQ(parse_size("1000", "x"), 1000u);
  EXPECT_EQ(parse_size("18446744073709551615", "x"), kMax);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) {
    const u64 v = rng() % (u64{1} << (1 + rng() % 62)) + 1;
    ASSERT_EQ(parse_size(std::to_string(v), "x"), v) << v;
  }
}

TEST(ParseSize, BinarySuffixesInEveryAcceptedSpelling) {
  const struct {
    char letter;
    int shift;
  } suffixes[] = {{'K', 10}, {'M', 20}, {'G', 30}, {'T', 40}};
  std::mt19937_64 rng(11);
  for (const auto& s : suffixes) {
    const std::string up(1, s.letter), low(1, static_cast<char>(s.letter - 'A' + 'a'));
    for (int i = 0; i < 20; ++i) {
      const u64 v = 1 + rng() % 5000;
      const u64 want = v << s.shift;
      const auto n = std::to_string(v);
      for (const auto& suffix : {up, up + "B", up + "iB", low, low + "b", low + "ib", low + "B", low + "iB"})
        ASSERT_EQ(parse_size(n + suffix, "x"), want) << n + suffix;
    }
  }
  EXPECT_EQ(parse_size("1K", "x"), 1024u);
  EXPECT_EQ(parse_size("64M", "x"), 67108864u);
  EXPECT_EQ(parse_size("3G", "x"), 3221225472u);
  EXPECT_EQ(parse_size("2T", "x"), 2199023255552u);
  EXPECT_EQ(parse_size("512B", "x"), 512u);  // plain bytes with a B suffix
  // The largest value a T suffix can hold: (2^24 - 1) << 40.
  EXPECT_EQ(parse_size("16777215T", "x"), u64{16777215} << 40);
}

TEST(ParseSize, SurroundingWhitespaceIsIgnored) {
  EXPECT_EQ(parse_size("  64M  ", "x"), 64u << 20);
  EXPECT_EQ(parse_size("\t2G\n", "x"), 2ull << 30);
  EXPECT_EQ(parse_size(" 7 ", "x"), 7u);
}

TEST(ParseSize, RejectsBadText) {
  expect_size_error("", "empty");
  expect_size_error("   ", "empty");
  expect_size_error("0", "greater than zero");
  expect_size_error("0K", "greater than zero");
  expect_size_error("-5", "positive");
  expect_size_error("-1K", "positive");
  expect_size_error("1X", "suffix");
  expect_size_error("12abc", "suffix");
  expect_size_error("1KX", "suffix");
  expect_size_error("1BB", "suffix");
  expect_size_error("1Ki", "suffix");
  expect_size_error("1.5K", "suffix");
  expect_size_error("1 K", "suffix");
  expect_size_error("K", "number");
  expect_size_error("+5", "number");
  expect_size_error("99999999999T", "too large");
  expect_size_error("16777216T", "too large");             // exactly 2^64
  expect_size_error("18446744073709551616", "too large");  // 2^64 without a suffix
  expect_size_error("17179869184G", "too large");          // 2^34 G = 2^64
  expect_size_error("999999999999999999999999999", "too large");
}

TEST(ParsePositive, AcceptsWholePositiveNumbers) {
  EXPECT_EQ(parse_positive("1", "--reps"), 1);
  EXPECT_EQ(parse_positive(" 42 ", "--reps"), 42);
  EXPECT_EQ(parse_positive("9223372036854775807", "--reps"), std::numeric_limits<std::int64_t>::max());
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200; ++i) {
    const auto v = static_cast<std::int64_t>(rng() >> (2 + rng() % 62)) + 1;
    ASSERT_EQ(parse_positive(std::to_string(v), "n"), v);
  }
}

TEST(ParsePositive, RejectsZeroNegativeAndJunk) {
  for (std::string bad : {"", " ", "0", "-3", "3.5", "abc", "12abc", "+", "1K", "9223372036854775808"}) {
    SCOPED_TRACE(bad);
    expect_error([&] { parse_positive(bad, "--reps"); }, {"--reps", "'" + bad + "'"});
  }
  expect_error([] { parse_positive("0", "--iters"); }, {"greater than zero"});
  expect_error([] { parse_positive("-7", "--iters"); }, {"greater than zero"});
  expect_error([] { parse_positive("99999999999999999999", "--iters"); }, {"too large"});
}

TEST(SplitList, TrimsItems) {
  EXPECT_EQ(split_list("a,b,c", "l"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(split_list(" fp32 , bf16\t", "l"), (std::vector<std::string>{"fp32", "bf16"}));
  EXPECT_EQ(split_list("single", "l"), (std::vector<std::string>{"single"}));
}

TEST(SplitList, EmptyItemIsAnError) {
  for (std::string bad : {"", ",", "a,", ",a", "a,,b", "a, ,b", " "}) {
    SCOPED_TRACE("'" + bad + "'");
    expect_error([&] { split_list(bad, "--ops"); }, {"--ops", "empty item"});
  }
}

TEST(ParseSizeList, ParsesEveryItem) {
  EXPECT_EQ(parse_size_list("1K, 2M,3", "-b"), (std::vector<u64>{1024, 2u << 20, 3}));
  expect_error([] { parse_size_list("1K,,2K", "-b"); }, {"empty item"});
  expect_error([] { parse_size_list("1K,2Q", "-b"); }, {"'2Q'"});
}

TEST(FormatSize, UsesTheLargestExactBinarySuffix) {
  EXPECT_EQ(format_size(0), "0");
  EXPECT_EQ(format_size(1), "1");
  EXPECT_EQ(format_size(1000), "1000");
  EXPECT_EQ(format_size(1023), "1023");
  EXPECT_EQ(format_size(1024), "1K");
  EXPECT_EQ(format_size(1536), "1536");
  EXPECT_EQ(format_size(3u << 20), "3M");
  EXPECT_EQ(format_size(1536u << 20), "1536M");
  EXPECT_EQ(format_size(1ull << 30), "1G");
  EXPECT_EQ(format_size(5ull << 40), "5T");
  EXPECT_EQ(format_size(1ull << 50), "1024T");  // T is the largest suffix
  const char* suffix[] = {"", "K", "M", "G", "T"};
  std::mt19937_64 rng(5);
  for (int i = 0; i < 300; ++i) {
    const int s = static_cast<int>(rng() % 5);
    u64 v = 1 + rng() % 100000;
    if (v % 1024 == 0) ++v;  // not itself a multiple of the next unit
    ASSERT_EQ(format_size(v << (10 * s)), std::to_string(v) + suffix[s]);
  }
}

TEST(FormatSize, RoundTripsThroughParseSize) {
  std::mt19937_64 rng(9);
  for (int i = 0; i < 1000; ++i) {
    const u64 v = (rng() >> (rng() % 64)) | 1u;
    const u64 x = v << (rng() % 2 ? 10 * (rng() % 4) : 0);
    if (x == 0) continue;
    ASSERT_EQ(parse_size(format_size(x), "x"), x) << format_size(x);
  }
}

TEST(SizeSweep, ASweepOfTooManySizesIsRefusedBeforeItIsMade) {
  EXPECT_EQ(size_sweep(1, 100000, 0, 1).size(), 100000u);  // the limit itself
  try {
    size_sweep(8, 1ULL << 30, 0, 1);  // -b 8 -e 1G -i 1
    ADD_FAILURE() << "10^9 sizes were made";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has 1073741817 sizes; the limit is 100000"), std::string::npos) << e.what();
  }
  EXPECT_THROW(size_sweep(1, 100001, 0, 1), Error);
  EXPECT_THROW(size_sweep(1, UINT64_MAX, 0, 1), Error);
  EXPECT_LE(size_sweep(1, UINT64_MAX, 2, 0).size(), 64u);
}

TEST(SizeSweep, MultipliesByTheFactor) {
  EXPECT_EQ(size_sweep(1024, 65536, 4, 0), (std::vector<u64>{1024, 4096, 16384, 65536}));
  EXPECT_EQ(size_sweep(1024, 100000, 2, 0), (std::vector<u64>{1024, 2048, 4096, 8192, 16384, 32768, 65536}));
  EXPECT_EQ(size_sweep(8, 8, 2, 0), (std::vector<u64>{8}));
  EXPECT_EQ(size_sweep(3, 100, 3, 0), (std::vector<u64>{3, 9, 27, 81}));
}

TEST(SizeSweep, AddsTheStepWhenGiven) {
  EXPECT_EQ(size_sweep(1, 10, 0, 3), (std::vector<u64>{1, 4, 7, 10}));
  EXPECT_EQ(size_sweep(100, 350, 0, 100), (std::vector<u64>{100, 200, 300}));
  EXPECT_EQ(size_sweep(1, 10, 4, 3), (std::vector<u64>{1, 4, 7, 10}));  // a step wins over the factor
}

TEST(SizeSweep, RandomSweepsHaveTheSweepProperties) {
  std::mt19937_64 rng(13);
  for (int i = 0; i < 500; ++i) {
    const u64 lo = 1 + rng() % 100000;
    const u64 hi = lo + rng() % (u64{1} << (rng() % 40));
    const bool by_step = rng() % 2;
    const u64 factor = by_step ? 0 : 2 + rng() % 7;
    const u64 step = by_step ? 1 + rng() % (hi - lo + 10) : 0;
    const auto s = size_sweep(lo, hi, factor, step);
    SCOPED_TRACE(testing::Message() << lo << ".." << hi << " factor " << factor << " step " << step);
    ASSERT_FALSE(s.empty());
    EXPECT_EQ(s.front(), lo);
    EXPECT_LE(s.back(), hi);
    for (std::size_t j = 1; j < s.size(); ++j) ASSERT_EQ(s[j], by_step ? s[j - 1] + step : s[j - 1] * factor);
    EXPECT_GT(by_step ? s.back() + step : s.back() * factor, hi);  // nothing below max was left out
  }
}

TEST(SizeSweep, StopsInsteadOfOverflowing) {
  EXPECT_EQ(size_sweep(u64{1} << 63, kMax, 2, 0), (std::vector<u64>{u64{1} << 63}));
  EXPECT_EQ(size_sweep(kMax - 5, kMax, 0, 10), (std::vector<u64>{kMax - 5}));
  const auto s = size_sweep(1, kMax, 2, 0);
  EXPECT_EQ(s.size(), 64u);
  EXPECT_EQ(s.back(), u64{1} << 63);
}

// size_sweep detects overflow with `next <= s`, which misses products that wrap past 2^64 but land
// above s (any factor >= 3): 5 x (2^62 + 1) wraps to 2^62 + 5. Disabled until core/units.cpp is fixed.
TEST(SizeSweep, StopsInsteadOfOverflowingWithLargeFactors) {
  const u64 lo = (u64{1} << 62) + 1;
  EXPECT_EQ(size_sweep(lo, kMax, 5, 0), (std::vector<u64>{lo}));
}

TEST(SizeSweep, RejectsBadRanges) {
  expect_error([] { size_sweep(2048, 1024, 2, 0); }, {"2K", "1K"});
  expect_error([] { size_sweep(0, 1024, 2, 0); }, {"size range"});
  expect_error([] { size_sweep(1, 1024, 1, 0); }, {"at least 2"});
  expect_error([] { size_sweep(1, 1024, 0, 0); }, {"at least 2"});
}

// Time spans (--duration, --window, --max-time): a positive number with an optional unit, and back.
TEST(TimeSpan, ParsesUnitsAndRefusesTheRest) {
  EXPECT_EQ(parse_time_span("90", "--window"), 90);
  EXPECT_EQ(parse_time_span("90s", "--window"), 90);
  EXPECT_EQ(parse_time_span("20m", "--duration"), 1200);
  EXPECT_EQ(parse_time_span("1.5h", "--duration"), 5400);
  EXPECT_EQ(parse_time_span("7d", "--duration"), 604800);
  EXPECT_EQ(parse_time_span("0.5s", "--window"), 0.5);
  for (const char* bad : {"", "0", "0m", "-1m", "m", "1x", "1..2", "1e3", "inf", "nan", " 1m", "1m ", "1h2"})
    expect_error([&] { (void)parse_time_span(bad, "--duration"); }, {"invalid --duration", "positive time"});
  EXPECT_EQ(format_time_span(120), "2m");
  EXPECT_EQ(format_time_span(10), "10s");
  EXPECT_EQ(format_time_span(5400), "1.5h");
  EXPECT_EQ(format_time_span(604800), "7d");
  EXPECT_EQ(format_time_span(0.25), "0.3s");  // rounded to a tenth
  EXPECT_EQ(format_time_span(90), "1.5m");
  // A duration a person reads: the unit changes at 120 s, 2 h, 2 days and 2 years.
  EXPECT_EQ(human_duration(42.5), "42.5 s");
  EXPECT_EQ(human_duration(120), "2 min");
  EXPECT_EQ(human_duration(7199), "120 min");
  EXPECT_EQ(human_duration(36 * 3600.0), "36 h");
  EXPECT_EQ(human_duration(12.3 * 86400), "12.3 days");
  EXPECT_EQ(human_duration(2.6 * 365.25 * 86400), "2.6 years");
  EXPECT_EQ(human_duration(0.0001234), "0.0001234 s");
}

}  // namespace
}  // namespace gpuscale
