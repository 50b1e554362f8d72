#pragma once
// Where a driver's timing loop lets the other groups of its GPU count take their turns between its
// timed repetitions (interleaved repetitions, harness/plan/rep_order_plan.h; the run's side:
// harness/run/repetition_turns.h). The run loop hands one (RunContext::gate) only to a benchmark that
// says how many repetitions it times (Benchmark::timed_repetitions), and only when its groups take
// turns; such a driver calls wait(0) before its warm-up, wait(i) before timed repetition i, and done()
// after its last, before its verification, so that setup, warm-up and checking never overlap another
// group's timed repetition.
namespace gpuscale {

class RepetitionGate {
 public:
  virtual ~RepetitionGate() = default;
  virtual void wait(int rep) = 0;  // returns when this group's turn for repetition `rep` has come
  virtual void done() = 0;         // returns when every group's turns are over
};

}  // namespace gpuscale
