#pragma once
// RankMeasurement on the wire (ranks send theirs to rank 0 as JSON text).
#include <nlohmann/json.hpp>

#include "harness/benchmark.h"

namespace gpuscale {

nlohmann::json measurement_to_json(const RankMeasurement& m);
RankMeasurement measurement_from_json(const nlohmann::json& j);

}  // namespace gpuscale
