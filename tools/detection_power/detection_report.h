#pragma once
// The detection-power results printed (docs/fleet.md, "Detection power"): the table of measure_power as
// text and JSON, each rate with its 95% interval, and one trial told in full for a replay. Printing
// only: what is counted, and how, is tools/detection_power/detection_power.h.
#include <cstdint>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "tools/detection_power/detection_power.h"

namespace gpuscale::detection {

std::string table_text(const PowerTable& table);
nlohmann::json table_json(const PowerTable& table);

// Trial `trial` told in full: its seed, where each fault sat, what every judgement named.
std::string trial_text(const PowerConfig& config, std::uint64_t trial);

// The 95% Wilson score interval of k successes in n trials, as fractions: the interval beside each rate.
std::pair<double, double> wilson_interval(std::int64_t k, std::int64_t n);

}  // namespace gpuscale::detection
