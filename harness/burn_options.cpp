#include "harness/burn_options.h"

#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "core/units.h"
#include "harness/burn_plan.h"
#include "harness/run_option_values.h"

namespace gpuscale {

using nlohmann::json;

json burn_kinds_json(const RunOptions& o) {
  json out = json::array();
  for (BurnKind k : o.burn_kinds) out.push_back(std::string(burn_kind_name(k)));
  return out;
}

void adopt_burn_kinds(RunOptions& o, const json& j) {
  o.burn_kinds.clear();
  try {
    for (const auto& k : strings(j)) o.burn_kinds.push_back(burn_kind_of(k));
  } catch (const Error&) {
    throw BadRecordedValue{"burn kinds: gemm, stream, all_reduce or mix"};
  }
}

std::optional<double> positive_or_null(const json& j) {
  if (j.is_null()) return std::nullopt;
  if (!j.is_number() || !(j.get<double>() > 0) || !std::isfinite(j.get<double>()))
    throw BadRecordedValue{"a positive number of seconds or null"};
  return j.get<double>();
}

// --duration: the burn-in's plan is made here, so a duration below one window, beyond a week or too
// short for its kinds is refused before anything runs; the run then measures the burn windows only.
void parse_burn_duration(RunOptions& o, const std::string& s, const std::string& what) {
  o.burn_duration_s = parse_time_span(s, what);
  (void)make_burn_plan(o.burn_duration_s, o.burn_window_s.value_or(kDefaultBurnWindowS), burn_kinds_or_default(o.burn_kinds));
  for (const auto& b : o.benchmarks)
    if (b != "burn" && b.rfind("burn.", 0) != 0)
      throw Error(fmt::format("--duration runs a burn-in, which measures its --burn work only: leave out "
                              "--benchmarks {}", terminal_quote(b)));
  if (o.benchmarks.empty()) o.benchmarks = {"burn"};
}

void check_burn_options(const RunOptions& o, const OptionText& text) {
  if (o.burn_duration_s > 0) return;
  for (const char* key : {"burn_kinds", "burn_window_s"})
    if (!text(key).empty())
      throw Error(fmt::format("{} shapes a burn-in: give --duration too (e.g. --duration 20m)",
                              key == std::string_view("burn_kinds") ? "--burn" : "--window"));
}

}  // namespace gpuscale
