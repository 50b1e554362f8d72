#include "harness/benchmarks/burn/burn_plan.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "core/units.h"

namespace gpuscale {
namespace {

std::string kind_list(const std::vector<BurnKind>& kinds) {
  std::string out;
  for (BurnKind k : kinds) out += (out.empty() ? "" : ",") + std::string(burn_kind_name(k));
  return out;
}

}  // namespace

BurnPlan make_burn_plan(double duration_s, double window_s, const std::vector<BurnKind>& kinds) {
  if (!(window_s > 0) || !std::isfinite(window_s))
    throw Error(fmt::format("--window must be a positive time, not {}", window_s));
  if (kinds.empty()) throw Error("--burn names no kind: give gemm, stream, all_reduce or mix");
  if (!(duration_s >= window_s))
    throw Error(fmt::format("--duration {} is below one --window of {}: a burn-in needs at least one whole window",
                            format_time_span(duration_s), format_time_span(window_s)));
  if (duration_s > kMaxBurnDurationS)
    throw Error(fmt::format("--duration {} is beyond a week ({}), the longest burn-in gpuscale runs: split it into "
                            "several runs",
                            format_time_span(duration_s), format_time_span(kMaxBurnDurationS)));
  // A relative tolerance, so 20m of 10s windows is 120 windows whatever the floating point says.
  const auto n = static_cast<int>(std::floor(duration_s / window_s * (1 + 1e-12)));
  if (n < static_cast<int>(kinds.size()))
    throw Error(fmt::format("--duration {} holds {} window{} of {}, fewer than the {} --burn kinds ({}): each kind "
                            "needs a window; lengthen --duration or shorten --window",
                            format_time_span(duration_s), n, n == 1 ? "" : "s", format_time_span(window_s),
                            kinds.size(), kind_list(kinds)));
  BurnPlan plan;
  plan.window_s = window_s;
  plan.duration_s = n * window_s;
  for (int i = 0; i < n; ++i)
    plan.windows.push_back({kinds[static_cast<std::size_t>(i) % kinds.size()], i, i * window_s, window_s});
  return plan;
}

std::string burn_plan_line(const BurnPlan& plan) {
  std::vector<BurnKind> kinds;
  for (const auto& w : plan.windows)
    if (std::find(kinds.begin(), kinds.end(), w.kind) == kinds.end()) kinds.push_back(w.kind);
  return fmt::format("the burn-in: {} windows of {} ({}, in turn), {}", plan.windows.size(),
                     format_time_span(plan.window_s), kind_list(kinds), format_time_span(plan.duration_s));
}

}  // namespace gpuscale
