// core/step_progress: each mark is one step, read back by any thread; the idle time is a duration.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "core/step_progress.h"

namespace gpuscale {
namespace {

TEST(StepProgress, EveryMarkCountsOnceFromAnyThread) {
  const auto before = current_progress();
  EXPECT_GE(before.idle_s, 0.0);
  EXPECT_TRUE(std::isfinite(before.idle_s));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([] {
      for (int i = 0; i < 1000; ++i) note_progress();
    });
  for (auto& t : threads) t.join();
  note_progress();
  const auto after = current_progress();
  EXPECT_EQ(after.steps - before.steps, 4001u);  // no mark lost to a race
  EXPECT_GE(after.idle_s, 0.0);
  EXPECT_TRUE(std::isfinite(after.idle_s));
}

}  // namespace
}  // namespace gpuscale
