#pragma once
// The run's side of interleaved repetitions (harness/repetition_gate.h): a row's turns
// (harness/plan/rep_order_plan.h) counted out with World::turn_barrier, which every rank of the job
// passes the same number of times: once when every group has set up, then once after each turn. A
// member's wait(i) passes the barriers before its round's turn for repetition i; done() passes the
// rest. finish() is done() for whoever did not time (an idle rank, a member whose driver failed or
// skipped the point before its loop), so every rank leaves the row having passed all of them.
#include <cstddef>
#include <vector>

#include "harness/plan/rep_order_plan.h"
#include "harness/repetition_gate.h"
#include "world/world.h"

namespace gpuscale {

class RepetitionTurns final : public RepetitionGate {
 public:
  // `round`: this rank's round in `turns`, or -1 when it measures nothing at this count.
  RepetitionTurns(const World& world, const std::vector<RepTurn>& turns, int round);
  void wait(int rep) override;  // throws gpuscale::Error for a repetition the turns do not hold
  void done() override { pass_until(total_); }
  void finish() { done(); }

 private:
  void pass_until(std::size_t barriers);

  const World& world_;
  std::size_t total_;               // barriers of the row: one per turn and the setup's
  std::vector<std::size_t> starts_; // barriers passed when this rank's turn for repetition i starts
  std::size_t passed_ = 0;
};

}  // namespace gpuscale
