#include "harness/memory_plan.h"

#include <fmt/format.h>

#include "analysis/row_text.h"
#include "core/error.h"
#include "core/term_text.h"
#include "core/units.h"
#include "harness/registry.h"
#include "kernels/cuda/cuda_plan.h"

namespace gpuscale {

MemoryBudget memory_budget(const DeviceInfo& d) {
  MemoryBudget b;
  if (d.backend == "cuda") {
    b.usable = d.free_memory_bytes > cuda::kMemoryHeadroom ? d.free_memory_bytes - cuda::kMemoryHeadroom : 0;
    b.described = fmt::format("GPU {} ({}) has {} free, {} of it kept for the CUDA context and libraries", d.index,
                              d.name, format_bytes(d.free_memory_bytes), format_bytes(cuda::kMemoryHeadroom));
    return b;
  }
  const auto& on_node = d.details.is_object() ? d.details.value("ranks_on_node", nlohmann::json(1)) : nlohmann::json(1);
  // A count from the backend (an int in the JSON, so signed); anything else: the whole host.
  const std::uint64_t ranks =
      on_node.is_number_integer() && on_node.get<long long>() > 0 ? static_cast<std::uint64_t>(on_node.get<long long>()) : 1;
  b.usable = d.free_memory_bytes / ranks;
  b.described = ranks > 1 ? fmt::format("each of the {} ranks on this node may use {} of the host's {} available",
                                        ranks, format_bytes(b.usable), format_bytes(d.free_memory_bytes))
                          : fmt::format("the host has {} available", format_bytes(d.free_memory_bytes));
  return b;
}

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
