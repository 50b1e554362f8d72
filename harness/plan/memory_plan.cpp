#include "harness/plan/memory_plan.h"

#include <fmt/format.h>

#include "analysis/row_text.h"
#include "core/error.h"
#include "core/term_text.h"
#include "core/units.h"
#include "harness/registry.h"

namespace gpuscale {

MemoryBudget memory_budget(const DeviceInfo& d) { return {d.usable_memory_bytes(), d.usable_memory_text()}; }

std::optional<std::string> memory_refusal(const std::vector<PlannedDemand>& points, const MemoryBudget& budget) {
  for (const auto& p : points) {
    if (p.demand.memory_bytes <= budget.usable) continue;
    const std::string need = p.demand.memory_bytes == UINT64_MAX ? std::string("more than 2^64 bytes")
                                                                 : format_bytes(p.demand.memory_bytes);
    return fmt::format("{} needs {} per rank ({}) but {}: choose smaller sizes (--array-size, --gemm-shapes, "
                       "-e, --copy-size) or fewer ranks per node",
                       terminal_safe(p.point), need, p.demand.memory_what, budget.described);
  }
  return std::nullopt;
}

std::vector<PlannedDemand> plan_demands(const nlohmann::json& plan, const DemandContext& ctx) {
  std::vector<PlannedDemand> out;
  for (const auto& point : plan.at("points")) {
    const auto key = point.at("benchmark").get<std::string>();
    const Benchmark* b = registry().find(key);
    if (b == nullptr) throw Error(fmt::format("the plan names benchmark '{}', which this gpuscale does not have",
                                       terminal_quote(key)));
    out.push_back({fmt::format("{} {}", key, params_label(point.at("params"), false)), b->demand(point.at("params"), ctx)});
  }
  return out;
}

void check_plan_memory(const nlohmann::json& plan, const DemandContext& ctx, const DeviceInfo& device) {
  if (auto why = memory_refusal(plan_demands(plan, ctx), memory_budget(device))) throw Error(*why);
}

}  // namespace gpuscale
