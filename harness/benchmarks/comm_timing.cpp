#include "harness/benchmarks/comm_timing.h"

#include <algorithm>
#include <atomic>
#include <chrono>

namespace gpuscale {
namespace {

std::atomic<double> slowest{0.0};

}  // namespace

std::unique_ptr<Communicator> timed_communicator(const std::function<std::unique_ptr<Communicator>()>& make,
                                                 double* seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  auto comm = make();
  const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (seconds) *seconds = dt;
  double seen = slowest.load();
  while (dt > seen && !slowest.compare_exchange_weak(seen, dt)) {
  }
  return comm;
}

double slowest_communicator_init_s() { return slowest.load(); }

double pair_setup_allowance_s(double slowest_init_s) {
  return std::max(kPairSetupFloorS, kPairSetupMultiple * std::max(slowest_init_s, 0.0));
}

}  // namespace gpuscale
