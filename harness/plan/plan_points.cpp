#include "harness/plan/plan_points.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "backends/backend.h"
#include "core/error.h"
#include "harness/registry.h"
#include "world/world.h"

namespace gpuscale {

nlohmann::json make_plan(const RunOptions& opts, Backend& backend, const World& world) {
  const auto benches = registry().select(opts.benchmarks, backend.name(), &backend.device());
  PlanContext ctx{opts, backend.device(), backend.name(), world.size(), backend.collective_transports()};
  ctx.gpus_per_node = world.size();
  for (const auto& node : world.tree().members) ctx.gpus_per_node = std::min(ctx.gpus_per_node, static_cast<int>(node.size()));
  nlohmann::json plan = {{"points", nlohmann::json::array()}};
  // Counted in full, kept no further than the cap (one benchmark's cases at a time).
  std::size_t total = 0;
  for (const Benchmark* b : benches) {
    auto cases = b->cases(ctx);
    total += cases.size();
    if (total > kMaxPlanPoints) continue;
    for (auto& p : cases) {
      plan["points"].push_back({{"benchmark", b->key()}, {"params", std::move(p)}});
      if (b->info().whole_job) plan["points"].back()["whole_job"] = true;  // one row, at the full size (resume reads it)
    }
  }
  if (total > kMaxPlanPoints)
    throw Error(fmt::format("the plan has {} points; the limit is {}: use a larger -i or -f, or fewer --benchmarks, "
                            "--dtypes, --ops", total, kMaxPlanPoints));
  // A burn-in's windows run in time order, the kinds in turn (harness/benchmarks/burn/burn_plan.h), not kind by kind.
  if (opts.burn_duration_s > 0)
    std::stable_sort(plan["points"].begin(), plan["points"].end(), [](const nlohmann::json& a, const nlohmann::json& b) {
      return a["params"].value("window", 0) < b["params"].value("window", 0);
    });
  if (plan["points"].empty())
    throw Error("nothing to measure: the selected benchmarks have no point for these options (see gpuscale list)");
  // 53 bits: exact in every JSON reader (JavaScript and Python floats included).
  std::random_device rd;
  plan["seed"] = opts.seed ? *opts.seed : ((std::uint64_t{rd()} << 32) ^ rd()) & ((1ULL << 53) - 1);
  return plan;
}

}  // namespace gpuscale
