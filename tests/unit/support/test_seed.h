#pragma once
// The seed of a randomised unit test, printed so a failure can be replayed: GPUSCALE_TEST_SEED when set,
// else a fresh one per process. Each test draws from that seed and its own name, so one printed number
// replays any test of the run: GPUSCALE_TEST_SEED=N ctest -R <test>.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace gpuscale::testing_seed {

inline std::uint64_t run_seed() {
  static const std::uint64_t seed = []() -> std::uint64_t {
    if (const char* s = std::getenv("GPUSCALE_TEST_SEED"); s && *s) return std::strtoull(s, nullptr, 10);
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }();
  return seed;
}

}  // namespace gpuscale::testing_seed

// A seed for this test's random generator: the run's seed (printed, and recorded as the JUnit property
// "seed") mixed with the test's name (FNV-1a), so two tests of one run draw different values.
inline std::uint64_t test_seed() {
  const std::uint64_t base = gpuscale::testing_seed::run_seed();
  std::string name = "test";
  if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info())
    name = std::string(info->test_suite_name()) + "." + info->name();
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ULL;
  std::printf("seed: GPUSCALE_TEST_SEED=%llu replays %s\n", static_cast<unsigned long long>(base), name.c_str());
  ::testing::Test::RecordProperty("seed", std::to_string(base));
  return base ^ h;
}
