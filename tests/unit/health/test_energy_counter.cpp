// health/energy_counter: energy from a cumulative counter, a RAPL wrap counted once, a backwards NVML
// counter (a driver reload) unknown with its reason, never negative.
#include <gtest/gtest.h>

#include <random>

#include "health/energy_counter.h"
#include "test_seed.h"

namespace gpuscale::health {
namespace {

TEST(EnergyCounter, ForwardsWrapsAndResets) {
  const EnergyCounter nvml{1e-3, std::nullopt, "NVML's energy counter"};
  auto e = energy_between(nvml, 1'000'000, 1'250'000);  // mJ
  ASSERT_TRUE(e.joules);
  EXPECT_DOUBLE_EQ(*e.joules, 250);
  EXPECT_DOUBLE_EQ(*average_power_w(e, 0.5), 500);
  e = energy_between(nvml, 1'250'000, 40);  // the driver reloaded: the counter began again
  EXPECT_FALSE(e.joules);
  EXPECT_NE(e.invalid.find("NVML's energy counter went backwards (from 1250000 to 40)"), std::string::npos) << e.invalid;
  EXPECT_FALSE(average_power_w(e, 1));

  const EnergyCounter rapl{1e-6, 262143328850ULL, "RAPL package-0"};
  e = energy_between(rapl, 262143328000ULL, 150ULL);  // wrapped once
  ASSERT_TRUE(e.joules);
  EXPECT_NEAR(*e.joules, (850 + 150) * 1e-6, 1e-12);
  e = energy_between(rapl, 5, 262143328851ULL);
  EXPECT_FALSE(e.joules);
  EXPECT_NE(e.invalid.find("beyond its range"), std::string::npos);
  EXPECT_FALSE(average_power_w(energy_between(rapl, 1, 2), 0));  // no time, no power
}

TEST(EnergyCounter, NeverNegativeOnRandomReadings) {
  std::mt19937_64 gen(3);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t wrap = 1 + gen() % (1ULL << 40);
    const bool wraps = gen() % 2;
    const EnergyCounter c{1e-6, wraps ? std::optional<std::uint64_t>(wrap) : std::nullopt, "c"};
    const std::uint64_t a = gen() % (wrap + 1), b = gen() % (wrap + 1);
    const auto e = energy_between(c, a, b);
    if (e.joules) {
      EXPECT_GE(*e.joules, 0);
      EXPECT_TRUE(e.invalid.empty());
    } else {
      EXPECT_FALSE(e.invalid.empty());
      EXPECT_FALSE(wraps);  // only a counter that does not wrap can be unknown here
    }
  }
}

}  // namespace
}  // namespace gpuscale::health

namespace gpuscale::health {
namespace {

// The counter keeps running through setup, warm-up and the check between a point's timed spans: only
// the spans' own energy counts, and one unread end makes the whole unknown with its reason.
TEST(SpanEnergy, OnlyTheTimedSpansCount) {
  std::mt19937_64 rng(test_seed());
  const EnergyCounter nvml{1e-3, std::nullopt, "NVML's energy counter"};
  std::uint64_t c = rng() % 1000000000;
  SpanEnergy spans;
  double want = 0, secs = 0;
  for (int i = 0; i < 3; ++i) {
    c += 1000000 + rng() % 100000000;  // untimed: setup, warm-up, check
    const std::uint64_t before = c;
    const std::uint64_t timed = 1000 + rng() % 1000000;
    c += timed;
    const double s = 0.5 + static_cast<double>(rng() % 1000) / 100;
    spans.add(nvml, before, c, s, "");
    want += static_cast<double>(timed) * 1e-3;
    secs += s;
  }
  ASSERT_TRUE(spans.total().joules);
  EXPECT_NEAR(*spans.total().joules, want, 1e-9 * want);
  EXPECT_DOUBLE_EQ(spans.seconds, secs);
  spans.add(nvml, std::nullopt, c, 1, "NVML: not supported");
  EXPECT_FALSE(spans.total().joules);
  EXPECT_EQ(spans.total().invalid, "NVML: not supported");
}

}  // namespace
}  // namespace gpuscale::health
