// core/utc_time: the one form every file and store writes times in, and its reader.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "test_seed.h"
#include "core/utc_time.h"

namespace gpuscale {
namespace {

using namespace std::chrono;

TEST(UtcTime, TimestampsAndTheirReader) {
  EXPECT_EQ(utc_timestamp(system_clock::time_point{}), "1970-01-01T00:00:00Z");
  EXPECT_EQ(utc_timestamp(sys_days{year{2026} / November / 29} + hours{18}), "2026-11-29T18:00:00Z");
  EXPECT_EQ(utc_timestamp(system_clock::time_point{seconds{951868799}}), "2000-02-29T23:59:59Z");
  // Sub-second parts are dropped, not rounded.
  EXPECT_EQ(utc_timestamp(sys_days{year{2024} / January / 1} + milliseconds{999}), "2024-01-01T00:00:00Z");
  // Read back to the second, for random times from 1970 to 2100.
  std::mt19937_64 rng(test_seed());
  for (int i = 0; i < 200; ++i) {
    const auto s = std::uniform_int_distribution<long long>(0, 4102444800LL)(rng);
    const auto text = utc_timestamp(system_clock::time_point{seconds{s}});
    ASSERT_TRUE(utc_epoch_seconds(text).has_value()) << text;
    EXPECT_EQ(*utc_epoch_seconds(text), static_cast<double>(s)) << text;
  }
  for (const char* bad : {"", "2026-11-29", "2026-11-29T18:00:00", "2026-11-29T18:00:00Zjunk", "yesterday"})
    EXPECT_FALSE(utc_epoch_seconds(bad).has_value()) << bad;
}

// A time on the calendar: what utc_timestamp writes, never month 13, hour 99, 30 February or a leap
// day of a year without one (the semantic validator's check of a file's times).
TEST(UtcTime, OnlyTimesOnTheCalendarAreTimes) {
  std::mt19937_64 rng(test_seed());
  for (int i = 0; i < 200; ++i) {
    const auto s = std::uniform_int_distribution<long long>(0, 4102444800LL)(rng);
    EXPECT_TRUE(is_utc_timestamp(utc_timestamp(system_clock::time_point{seconds{s}})));
  }
  for (const char* good : {"2024-02-29T23:59:59Z", "2026-12-31T00:00:00Z", "1970-01-01T00:00:00Z"})
    EXPECT_TRUE(is_utc_timestamp(good)) << good;
  for (const char* bad : {"2026-13-02T03:04:05Z", "2026-12-02T99:04:05Z", "2026-02-30T03:04:05Z", "2025-02-29T00:00:00Z",
                          "2026-12-02T03:60:05Z", "2026-12-02T03:04:05", "", "2026-00-10T00:00:00Z"})
    EXPECT_FALSE(is_utc_timestamp(bad)) << bad;
}

}  // namespace
}  // namespace gpuscale
