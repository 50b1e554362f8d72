#include "harness/benchmarks/agreed_setup.h"

#include <exception>

#include <fmt/format.h>

#include "collectives/communicator.h"
#include "core/error.h"
#include "core/fault.h"

namespace gpuscale {

std::string setup_failed_elsewhere(int failed_rank) {
  return fmt::format("setup failed on rank {} (its entry says why); no rank measured", failed_rank);
}

void agreed_setup(const Group& group, const std::string& benchmark, const std::function<void()>& setup) {
  const int me = group.world_rank();
  std::string why;
  try {
    if (fault_injected(fmt::format("setup-fail:{}@{}", benchmark, me)))
      throw Error("injected setup failure (GPUSCALE_TEST_FAULT)", kExitInvalidResult);
    setup();
  } catch (const CommunicatorAborted&) {
    throw;  // the group cannot agree on anything any more (harness/run/runner.cpp ends the run)
  } catch (const std::exception& e) {
    why = e.what();
    if (why.empty()) why = "unknown error";
  }
  const int first = group.first_failed(!why.empty());
  if (!why.empty()) throw Error(fmt::format("setup failed on rank {}: {}", me, why), kExitInvalidResult);
  if (first >= 0) throw Error(setup_failed_elsewhere(first), kExitInvalidResult);
}

}  // namespace gpuscale
