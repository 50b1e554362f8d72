// core/timed_span: the listener hears the outermost span open and close, once each, nested spans
// silent; no listener, nothing; a listener replaced while a span is open is not told of its end.
#include <gtest/gtest.h>

#include <random>

#include "core/timed_span.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

struct Counting final : TimedSpanListener {
  int opened = 0, closed = 0;
  void span_opened() override { ++opened; }
  void span_closed() override { ++closed; }
};

TEST(TimedSpan, TheOutermostSpanIsHeardOnce) {
  std::mt19937_64 rng(test_seed());
  const int spans = 1 + static_cast<int>(rng() % 5);
  Counting c;
  set_timed_span_listener(&c);
  for (int i = 0; i < spans; ++i) {
    TimedSpan outer;
    TimedSpan inner;
    EXPECT_EQ(c.opened, i + 1);
    EXPECT_EQ(c.closed, i);
  }
  EXPECT_EQ(c.closed, spans);
  EXPECT_EQ(set_timed_span_listener(nullptr), &c);
  { TimedSpan none; }
  EXPECT_EQ(c.opened, spans);
  {
    set_timed_span_listener(&c);
    TimedSpan open;
    set_timed_span_listener(nullptr);  // the window ended first (a point that threw)
  }
  EXPECT_EQ(c.closed, spans);
}

}  // namespace
}  // namespace gpuscale
