#include "harness/plan/memory_plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/row_text.h"
#include "core/error.h"
#include "core/term_text.h"
#include "core/units.h"
#include "harness/registry.h"

namespace gpuscale {

MemoryBudget memory_budget(const DeviceInfo& d) { return {d.usable_memory_bytes(), d.usable_memory_text()}; }

namespace {

std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) { return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b; }
std::string bytes_text(std::uint64_t b) { return b == UINT64_MAX ? std::string("more than 2^64 bytes") : format_bytes(b); }

// The split communicators alive during a point: its GPU count's and the point's own (summed in 64
// bits: two counts near INT_MAX must not overflow).
std::uint64_t split_count(const PlannedDemand& p) {
  return static_cast<std::uint64_t>(std::max(0, p.count_communicators)) +
         static_cast<std::uint64_t>(std::max(0, p.demand.communicators));
}

}  // namespace

std::uint64_t communicator_bytes(const PlannedDemand& p, const CommunicatorMemory& comms) {
  const std::uint64_t splits = split_count(p);
  if (splits == 0) return 0;
  return add_sat(comms.first_bytes, mul_sat(comms.split_bytes, splits));
}

std::optional<std::string> memory_refusal(const std::vector<PlannedDemand>& points, const MemoryBudget& budget,
                                          const CommunicatorMemory& comms) {
  for (const auto& p : points) {
    const std::uint64_t comm = communicator_bytes(p, comms);
    const std::uint64_t total = add_sat(p.demand.memory_bytes, comm);
    if (total <= budget.usable) continue;
    const std::uint64_t splits = split_count(p);
    const std::string with = comm == 0 ? std::string()
                                       : fmt::format(", and {} for the job's communicator and {} split from it{}",
                                                     bytes_text(comm), splits,
                                                     comms.source.empty() ? std::string() : fmt::format(" ({})", comms.source));
    return fmt::format("{} needs {} per rank ({}{}) but {}: choose smaller sizes (--array-size, --gemm-shapes, "
                       "-e, --copy-size) or fewer ranks per node",
                       terminal_safe(p.point), bytes_text(total), p.demand.memory_what, with, budget.described);
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

void check_plan_memory(const nlohmann::json& plan, const DemandContext& ctx, const DeviceInfo& device,
                       const std::vector<int>& count_comms, const CommunicatorMemory& comms) {
  auto points = plan_demands(plan, ctx);
  for (std::size_t i = 0; i < points.size() && i < count_comms.size(); ++i) points[i].count_communicators = count_comms[i];
  if (auto why = memory_refusal(points, memory_budget(device), comms)) throw Error(*why);
}

}  // namespace gpuscale
