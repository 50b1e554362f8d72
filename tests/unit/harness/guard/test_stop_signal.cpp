// The stop request of harness/guard/stop_signal.h: a first signal is recorded, a second exits at once.
#include <csignal>

#include <gtest/gtest.h>

#include "core/error.h"
#include "harness/guard/stop_signal.h"

namespace gpuscale {
namespace {

TEST(StopSignal, FirstSignalIsRecordedNotFatal) {
  install_stop_handlers();
  set_stop_announce(false);
  reset_stop_request();
  EXPECT_EQ(stop_requested(), 0);
  std::raise(SIGUSR1);
  EXPECT_EQ(stop_requested(), SIGUSR1);
  EXPECT_EQ(stop_reason(stop_requested()), "interrupted by SIGUSR1");
  reset_stop_request();
  std::raise(SIGTERM);
  EXPECT_EQ(stop_reason(stop_requested()), "interrupted by SIGTERM");
  reset_stop_request();
  signal(SIGUSR1, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGINT, SIG_DFL);
}

TEST(StopSignalDeathTest, SecondSignalExitsAtOnceWithTheInterruptedCode) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        install_stop_handlers();
        set_stop_announce(true);
        reset_stop_request();
        std::raise(SIGINT);
        std::raise(SIGUSR1);
        std::_Exit(0);  // not reached
      },
      testing::ExitedWithCode(kExitInterrupted), "second signal: exiting now");
}

}  // namespace
}  // namespace gpuscale
