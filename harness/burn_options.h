#pragma once
// The burn-in's options of `gpuscale run` (--burn, --window, --duration; harness/run_option_table.cpp
// holds their rows): their text into RunOptions, their plan.options values and back. --duration makes
// the burn-in's plan (harness/burn_plan.h) as it is read, so a bad combination is refused at once.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/options.h"
#include "harness/run_option_table.h"

namespace gpuscale {

nlohmann::json burn_kinds_json(const RunOptions& o);
void adopt_burn_kinds(RunOptions& o, const nlohmann::json& j);  // throws BadRecordedValue
// A recorded positive number of seconds, or null; throws BadRecordedValue.
std::optional<double> positive_or_null(const nlohmann::json& j);
// --duration: the burn-in's plan from the three options (refusals: gpuscale::Error, exit 2); the run
// then measures the burn windows only (--benchmarks naming anything else is refused).
void parse_burn_duration(RunOptions& o, const std::string& s, const std::string& what);
// --burn or --window without --duration: refused.
void check_burn_options(const RunOptions& o, const OptionText& text);

}  // namespace gpuscale
