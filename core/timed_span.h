#pragma once
// The timed part of a point. A benchmark driver opens a TimedSpan around its timed repetitions, and
// whoever listens (the run's telemetry, health/run_telemetry.h) reads its energy counter at each end,
// so a row's energy, average power and work per joule are those of the work it timed, not of the
// communicator's creation, the setup, the warm-up and the verification around it. Spans nest (only the
// outermost is reported); without a listener a span costs a branch. One listener at a time, on the
// thread that runs the points.
namespace gpuscale {

class TimedSpanListener {
 public:
  virtual ~TimedSpanListener() = default;
  virtual void span_opened() = 0;
  virtual void span_closed() = 0;
};

// The listener of the spans opened from now on (nullptr: none); returns the one it replaces.
TimedSpanListener* set_timed_span_listener(TimedSpanListener* listener);

class TimedSpan {
 public:
  TimedSpan();
  ~TimedSpan();
  TimedSpan(const TimedSpan&) = delete;
  TimedSpan& operator=(const TimedSpan&) = delete;

 private:
  TimedSpanListener* listener_;  // the one told at opening is told at closing
};

}  // namespace gpuscale
