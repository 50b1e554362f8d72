#include "harness/benchmarks/watched_communicator.h"

#include <optional>
#include <string>
#include <vector>

#include "core/step_progress.h"
#include "world/activity.h"

namespace gpuscale {
namespace {

// Marks the rank as inside a collective while it times or checks one, and each one done as progress.
class WatchedRunner final : public CollectiveRunner {
 public:
  WatchedRunner(std::unique_ptr<CollectiveRunner> inner, std::string what) : inner_(std::move(inner)), what_(std::move(what)) {}
  const CollCounts& counts() const override { return inner_->counts(); }
  std::string transport() const override { return inner_->transport(); }
  nlohmann::json details() const override { return inner_->details(); }
  // A timed batch or a check done is a step of the rank's progress (core/step_progress.h), marked after
  // the transport's own clock stopped: a slow peer's collective still completes them, a hung one does not.
  double time(int iters) override {
    ActivityScope in(Phase::collective, what_);
    const double t = inner_->time(iters);
    note_progress();
    return t;
  }
  std::vector<double> time_each(int iters) override {
    ActivityScope in(Phase::collective, what_ + " (per-iteration timing)");
    auto t = inner_->time_each(iters);
    note_progress();
    return t;
  }
  std::uint64_t check() override {
    ActivityScope in(Phase::collective, what_ + " (check)");
    const std::uint64_t wrong = inner_->check();
    note_progress();
    return wrong;
  }

 private:
  std::unique_ptr<CollectiveRunner> inner_;
  std::string what_;
};

class WatchedCommunicator final : public Communicator {
 public:
  explicit WatchedCommunicator(std::unique_ptr<Communicator> inner) : inner_(std::move(inner)) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string transport() const override { return inner_->transport(); }
  std::optional<std::string> unsupported(const CollectiveCase& c) const override { return inner_->unsupported(c); }
  std::unique_ptr<CollectiveRunner> prepare(const CollectiveCase& c) override {
    const std::string what = std::string(collective_spec(c.coll).name);
    ActivityScope in(Phase::collective, what + " (setup)");  // transports may synchronise here
    return std::make_unique<WatchedRunner>(inner_->prepare(c), what);
  }
  Communicator& unwrapped() override { return inner_->unwrapped(); }

 private:
  std::unique_ptr<Communicator> inner_;
};

}  // namespace

std::unique_ptr<Communicator> watch_communicator(std::unique_ptr<Communicator> inner) {
  return std::make_unique<WatchedCommunicator>(std::move(inner));
}

}  // namespace gpuscale
