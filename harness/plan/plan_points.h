#pragma once
// The run's plan: every benchmark's points for these options, and the seed of their inputs. Rank 0
// plans (harness/run/runner.cpp broadcasts it); a plan over kMaxPlanPoints is refused with its count.
#include <cstddef>

#include <nlohmann/json.hpp>

#include "harness/options/options.h"

namespace gpuscale {

class Backend;
class World;

inline constexpr std::size_t kMaxPlanPoints = 100000;

// {"points": [{benchmark, params[, whole_job]}...], "seed": N}. Throws gpuscale::Error when nothing is
// selected or the plan is over kMaxPlanPoints (counted in full, kept no further than the cap).
nlohmann::json make_plan(const RunOptions& opts, Backend& backend, const World& world);

}  // namespace gpuscale
