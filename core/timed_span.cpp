#include "core/timed_span.h"

namespace gpuscale {
namespace {
TimedSpanListener* g_listener = nullptr;
int g_depth = 0;  // open spans: only the outermost is reported
}  // namespace

TimedSpanListener* set_timed_span_listener(TimedSpanListener* listener) {
  TimedSpanListener* old = g_listener;
  g_listener = listener;
  g_depth = 0;
  return old;
}

TimedSpan::TimedSpan() : listener_(g_listener) {
  if (listener_ && g_depth++ == 0) listener_->span_opened();
}

TimedSpan::~TimedSpan() {
  if (listener_ && listener_ == g_listener && --g_depth == 0) listener_->span_closed();
}

}  // namespace gpuscale
