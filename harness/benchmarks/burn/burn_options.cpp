// The burn-in's rows of `gpuscale run`'s option table (--burn, --window, --duration), added in the
// table's order by add_burn_options (harness/options/run_option_table.h): their text into RunOptions,
// their plan.options values and back. --duration makes the burn-in's plan (harness/benchmarks/burn/
// burn_plan.h) as it is read, so a bad combination is refused at once.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "core/units.h"
#include "harness/benchmarks/burn/burn_plan.h"
#include "harness/options/run_option_table.h"
#include "harness/options/run_option_values.h"

namespace gpuscale {

using nlohmann::json;

namespace {

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

}  // namespace

void add_burn_options(std::vector<RunOption>& t) {
  using O = RunOptions;
  // Burn-in (harness/benchmarks/burn/burn_plan.h, docs/acceptance.md). --duration comes last of the three: it makes
  // the plan of windows from all three, so a bad combination is refused as the options are read.
  t.push_back({.names = "--burn", .key = "burn_kinds",
       .help = "burn-in: the work of its windows, in turn: gemm, stream, all_reduce, mix (GEMM then an all_reduce, "
               "the shape of a training step; the default); with --duration",
       .parse = [](O& o, const std::string& s, const std::string&) { o.burn_kinds = parse_burn_kinds(s); },
       .recorded = Recorded::shapes, .record = [](const O& o) { return burn_kinds_json(o); }, .adopt = adopt_burn_kinds});
  t.push_back({.names = "--window", .key = "burn_window_s",
       .help = "burn-in: the length of each measured window (default 10s); with --duration",
       .parse = [](O& o, const std::string& s, const std::string& what) { o.burn_window_s = parse_time_span(s, what); },
       .recorded = Recorded::shapes, .record = [](const O& o) { return o.burn_window_s ? json(*o.burn_window_s) : json(nullptr); },
       .adopt = [](O& o, const json& j) { o.burn_window_s = positive_or_null(j); }});
  t.push_back({.names = "--duration", .key = "burn_duration_s",
       .help = "run a burn-in this long (s, m, h or d; at most a week): every GPU loaded with the --burn work, "
               "measured per --window, drift and sustained outliers reported; the run measures nothing else",
       .parse = parse_burn_duration, .check = check_burn_options, .recorded = Recorded::shapes,
       .record = [](const O& o) { return o.burn_duration_s > 0 ? json(o.burn_duration_s) : json(nullptr); },
       .adopt = [](O& o, const json& j) { o.burn_duration_s = positive_or_null(j).value_or(0); }});
}

}  // namespace gpuscale
